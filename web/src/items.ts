// The shop's items (RULES-items §1): their names, their prices from matchmaking
// (ListItemPrices), and buying one — always after the player confirmed its price (ask.ts).

import { Asset } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { matchmaking, requestId } from "./api";
import { ask } from "./ask";

export const ITEMS: { asset: Asset; name: string; what: string }[] = [
  { asset: Asset.ROOM_CARD, name: "房卡", what: "room card: opens a private room" },
  { asset: Asset.DOUBLE_CARD, name: "加倍卡", what: "double card: doubles your next hand's payments" },
  { asset: Asset.MATCH_CARD, name: "比赛卡", what: "match card: enters a tournament" },
];

export function itemName(asset: Asset): string {
  return asset === Asset.SILVER ? "银子" : (ITEMS.find((i) => i.asset === asset)?.name ?? Asset[asset]);
}

let prices: Promise<Map<Asset, bigint>> | null = null;

/** Silver per item (0: not for sale), read once per page. */
export function itemPrices(): Promise<Map<Asset, bigint>> {
  prices ??= matchmaking
    .listItemPrices({})
    .then((r) => new Map(r.prices.map((p) => [p.asset, p.silver])))
    .catch((e) => {
      prices = null;
      throw e;
    });
  return prices;
}

/** Buy ``count`` of ``asset`` once the player confirmed the price: false when they did not
 * (nothing is bought); errors (not enough silver, silver held by a seat) are thrown. */
export async function buyConfirmed(sessionToken: string, asset: Asset, count = 1, why = ""): Promise<boolean> {
  const price = (await itemPrices()).get(asset) ?? 0n;
  const name = itemName(asset);
  if (price <= 0n) throw new Error(`${name} is not for sale here`);
  const total = price * BigInt(count);
  const yes = await ask(
    `Buy ${count} ${name}?`,
    `${why}${count} ${name} cost${count === 1 ? "s" : ""} ${total} 银子 silver.`,
    `Pay ${total} 银子`,
  );
  if (!yes) return false;
  await matchmaking.buyItems({ sessionToken, asset, count: BigInt(count), requestId: requestId() });
  return true;
}
