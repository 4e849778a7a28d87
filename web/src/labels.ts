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
      return ready ? "敲: pick the tile to discard with it" : "Your turn: pick a tile to discard (tap it, or ←/→ and Enter)";
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

// --- the hand's result, read by a player ------------------------------------------------------

/** A seat as the viewer reads it: "You" / "你" for their own, else the seat's name. */
export interface Who {
  en: string;
  zh: string;
  you: boolean;
}

/** "You pay Bot 2 10" / "你付 Bot 2 10": a transfer of chips from the viewer's side. */
export function transferText(payer: Who, payee: Who | null, amount: bigint): { en: string; zh: string } {
  if (!payee) return { en: `${payer.en} ${payer.you ? "pay" : "pays"} the house ${amount}`, zh: `${payer.zh}付庄家 ${amount}` };
  if (payer.you) return { en: `You pay ${payee.en} ${amount}`, zh: `你付 ${payee.zh} ${amount}` };
  if (payee.you) return { en: `${payer.en} pays you ${amount}`, zh: `${payer.zh} 付你 ${amount}` };
  return { en: `${payer.en} pays ${payee.en} ${amount}`, zh: `${payer.zh} 付 ${payee.zh} ${amount}` };
}

/** What each scoring item is called (Chinese, English) and what its amount counts; codes not
 * listed fall back to the gateway's label without its detail. */
export const ITEM_NAMES: Record<string, [string, string, string]> = {
  FLOWER_TILE: ["花牌", "flower tile", "花"],
  BASE_FLOWERS: ["底注花", "base flowers", "花"],
  FLOWERS_TOTAL: ["花数", "flowers in all", "花"],
  WIND_PONG: ["风刻", "wind pong", "花"],
  DRAGON_PONG: ["字牌刻", "dragon pong", "花"],
  SUITED_EXPOSED_KONG: ["明杠", "exposed kong", "花"],
  SUITED_CONCEALED_KONG: ["暗杠", "concealed kong", "花"],
  HAND: ["胡牌牌型", "winning hand", "pts"],
  BASE_POINTS: ["底分", "base points", "pts"],
  RAW_VALUE: ["底分+花分", "value before multipliers", "pts"],
  CONCEALED_HAND: ["门清", "concealed hand", "×"],
  DICE_BONUS: ["开宝", "dice bonus", "×"],
  DRAWN_HAND_BONUS: ["荒番", "drawn-hand bonus", "×"],
  REPLACEMENT_WIN: ["杠开", "win on a replacement draw", "×"],
  ROB_KONG: ["抢杠", "robbing a kong", "×"],
  HAND_CAP: ["封顶勒子", "hand cap", "勒子"],
  TABLE_CAP: ["单局封顶", "table cap", "chips"],
  VALUE: ["一份", "value of one share", "pts"],
  FLOOR_TO_LEZI: ["不足勒子按勒子算", "raised to 1 勒子", "pts"],
  DRAWN_HAND: ["流局", "drawn hand: nobody pays", ""],
  ESCAPE_PENALTY: ["逃跑罚分", "escape penalty", "chips"],
  ESCAPE_SHARE: ["罚分分配", "share of the escape penalty", "chips"],
  HOUSE_SHARE: ["系统得分", "to the house", "chips"],
  HUANGFAN_THIS_HAND: ["荒番", "drawn-hand counter this hand", ""],
  HUANGFAN_DICE: ["骰子荒番", "the dice add to the drawn-hand counter", ""],
  NEXT_HUANGFAN: ["下局荒番", "drawn-hand counter next hand", ""],
  PAY_SELF_DRAW: ["自摸", "pays a self-drawn win", "chips"],
  PAY_DISCARD: ["点炮", "discarded the winning tile", "chips"],
  PAY_ROB_KONG: ["抢杠", "their kong was robbed", "chips"],
  PAY_CHENGBAO: ["承包", "liable player pays", "chips"],
};

// Codes whose amount is a seat (read as a name) or that say nothing a player needs twice.
export const SEAT_ITEMS = new Set(["NEXT_DEALER"]);
