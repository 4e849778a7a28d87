// Tiles: the proto Tile value (canonical index + 1, RULES.md §1) in mpsz notation, its Chinese
// name, and the DOM of a tile face.

const NUMERALS = ["一", "二", "三", "四", "五", "六", "七", "八", "九"];
const HONORS = ["东", "南", "西", "北", "白", "发", "中"];
const HONOR_NAMES = ["东风", "南风", "西风", "北风", "白板", "发财", "红中"];
const FLOWERS = ["春", "夏", "秋", "冬", "梅", "兰", "竹", "菊"];
// shanghai-baida's extra bonus tiles 1a-4a and its 百搭 1j (RULES-presets §13.0)
const EXTRAS = ["老鼠", "财神", "猫", "聚宝盆"];
const EXTRA_GLYPHS = ["鼠", "财", "猫", "盆"];
const SUITS = ["m", "p", "s"] as const;
const SUIT_NAMES = { m: "万", p: "筒", s: "条" } as const;

export type Suit = "m" | "p" | "s" | "z" | "f" | "a" | "j";

export interface TileFacts {
  value: number;
  rank: number; // 1-9 suits, 1-7 honors, 1-8 flowers, 1-4 extras, 1 百搭
  suit: Suit;
  code: string; // mpsz: "5m"
  name: string; // Chinese: "五万"
}

export function tileFacts(value: number): TileFacts {
  const i = value - 1;
  if (i < 0 || i > 46) return { value, rank: 0, suit: "z", code: "?", name: "?" };
  if (i === 46) return { value, rank: 1, suit: "j", code: "1j", name: "百搭" };
  if (i >= 42) return { value, rank: i - 41, suit: "a", code: `${i - 41}a`, name: EXTRAS[i - 42] };
  if (i < 27) {
    const suit = SUITS[Math.floor(i / 9)];
    const rank = (i % 9) + 1;
    return { value, rank, suit, code: `${rank}${suit}`, name: NUMERALS[rank - 1] + SUIT_NAMES[suit] };
  }
  if (i < 34) {
    const rank = i - 26;
    return { value, rank, suit: "z", code: `${rank}z`, name: HONOR_NAMES[rank - 1] };
  }
  const rank = i - 33;
  return { value, rank, suit: "f", code: `${rank}f`, name: FLOWERS[rank - 1] };
}

/** "5m五万" as the terminal client prints it. */
export function tileLabel(value: number): string {
  const t = tileFacts(value);
  return `${t.code}${t.name}`;
}

export function tilesText(values: Iterable<number>): string {
  return [...values].map((v) => tileFacts(v).code).join(" ");
}

function el(tag: string, cls: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// Pips of a dots (筒) or bamboo (条) tile, in a 3-column grid of the classic layouts' size.
function pips(t: TileFacts): HTMLElement {
  const box = el("span", `pips pips-${t.rank}`);
  for (let k = 0; k < t.rank; k++) {
    const pip = el("span", t.suit === "p" ? "dot" : "stick");
    // colour as on real sets: dots alternate blue/green with a red centre; bamboo green, one red
    if (t.suit === "p") pip.classList.add(k === Math.floor(t.rank / 2) && t.rank % 2 ? "red" : k % 2 ? "green" : "blue");
    else if (t.rank === 1 || (t.rank >= 5 && k === Math.floor(t.rank / 2) && t.rank % 2)) pip.classList.add("red");
    box.append(pip);
  }
  return box;
}

/** A tile face: the face itself, its mpsz code in a corner and its Chinese name as title. */
export function tileElement(value: number, size: "lg" | "md" | "sm" = "md"): HTMLElement {
  const t = tileFacts(value);
  const tile = el("span", `tile tile-${size} suit-${t.suit}`);
  tile.dataset.tile = t.code;
  tile.title = `${t.code} ${t.name}`;
  const face = el("span", "face");
  if (t.suit === "m") {
    face.append(el("span", "numeral", NUMERALS[t.rank - 1]), el("span", "wan", "万"));
  } else if (t.suit === "p" || t.suit === "s") {
    face.append(pips(t));
  } else if (t.suit === "z") {
    const glyph = el("span", `honor honor-${t.rank}`, t.rank === 5 ? "" : HONORS[t.rank - 1]);
    face.append(glyph);
  } else if (t.suit === "f") {
    face.append(el("span", "flower", FLOWERS[t.rank - 1]), el("span", "flower-n", String(t.rank)));
  } else if (t.suit === "a") {
    face.append(el("span", "flower extra", EXTRA_GLYPHS[t.rank - 1]));
  } else {
    face.append(el("span", "joker", "百"), el("span", "joker", "搭"));
  }
  tile.append(face, el("span", "code", t.code));
  if (size === "lg") tile.append(el("span", "caption", t.name)); // 五筒 under one's own tiles
  return tile;
}

/** A face-down tile (another seat's concealed tile, a concealed kong's hidden tiles). */
export function tileBack(size: "md" | "sm" = "sm"): HTMLElement {
  return el("span", `tile tile-${size} back`);
}
