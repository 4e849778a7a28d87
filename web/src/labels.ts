// What the page calls things: winds, hand types, win kinds, the rules offered, melds, prompts.

import { HandType, MeldKind, WinKind, type Meld } from "./gen/mahjong/common/v1/common_pb";
import { PromptKind, type Prompt } from "./gen/mahjong/gateway/v1/gateway_pb";
import { tileLabel, tilesText } from "./tiles";

export const WINDS = ["东", "南", "西", "北"];
export const HAND_TYPES: Record<number, string> = {
  [HandType.PONG_PONG]: "碰碰胡",
  [HandType.HALF_FLUSH]: "混一色",
  [HandType.FULL_FLUSH]: "清一色",
  [HandType.HALF_FLUSH_PONGS]: "混碰",
  [HandType.FULL_FLUSH_PONGS]: "清碰",
  [HandType.ALL_HONORS]: "风一色",
  [HandType.ALL_HONOR_PONGS]: "风碰",
  [HandType.EIGHT_FLOWERS]: "八花齐",
};
// The rules a table can be started with: a preset and its options (RULES §13, RULES-presets).
export const RULES: { id: string; label: string; name: string; options: Record<string, string> }[] = [
  { id: "qiaoma", label: "上海敲麻 Qiaoma", name: "shanghai-qiaoma", options: {} },
  { id: "old", label: "上海老麻将 户/番", name: "shanghai-old", options: {} },
  { id: "baida", label: "上海百搭 4 × 百搭", name: "shanghai-baida", options: {} },
  { id: "baida-flipped", label: "上海百搭 翻百搭", name: "shanghai-baida", options: { "baida_tiles.wildcards": "flipped" } },
];
export const PRESET_NAMES: Record<string, string> = {
  "": "上海敲麻",
  "shanghai-qiaoma": "上海敲麻",
  "shanghai-old": "上海老麻将",
  "shanghai-baida": "上海百搭",
};

export const WIN_KINDS: Record<number, string> = {
  [WinKind.SELF_DRAW]: "自摸",
  [WinKind.DISCARD]: "点炮",
  [WinKind.ROB_KONG]: "抢杠",
  [WinKind.EIGHT_FLOWERS]: "八花齐",
};

export function meldName(m: Meld | undefined): string {
  if (!m) return "";
  const kinds: Record<number, string> = {
    [MeldKind.CHOW]: "吃",
    [MeldKind.PONG]: "碰",
    [MeldKind.EXPOSED_KONG]: "明杠",
    [MeldKind.ADDED_KONG]: "加杠",
    [MeldKind.CONCEALED_KONG]: "暗杠",
  };
  return `${kinds[m.kind] ?? "meld"} ${tilesText(m.tiles)}`;
}

export function promptText(p: Prompt | undefined, ready: boolean): string {
  if (!p) return "";
  switch (p.kind) {
    case PromptKind.OWN_TURN:
      return ready ? "敲: click the tile to discard with it" : "Your turn: click a tile to discard it";
    case PromptKind.CLAIM:
      return `${tileLabel(p.tile)} was discarded — claim it?`;
    case PromptKind.ROB_KONG:
      return `a kong is added with ${tileLabel(p.tile)} — rob it?`;
    case PromptKind.TILE_SWAP:
      return `换牌: pick ${p.options?.swapCount ?? 0} tiles to bury`;
    default:
      return "";
  }
}
