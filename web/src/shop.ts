// The shop (商城): each item with its price in silver and what the player holds, bought one at
// a time after a confirmation naming the price (items.ts).

import type { Player } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { Asset } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError } from "./api";
import { banner, button, h } from "./dom";
import { ITEMS, buyConfirmed, itemPrices } from "./items";
import type { SignedIn } from "./session";

function held(p: Player, asset: Asset): bigint {
  if (asset === Asset.ROOM_CARD) return BigInt(p.roomCards);
  if (asset === Asset.DOUBLE_CARD) return p.doubleCards;
  return p.matchCards;
}

/** The shop's card; ``bought`` runs after a purchase (the lobby shows the new balances). */
export function shopCard(me: SignedIn, player: Promise<Player | undefined>, bought: () => void): HTMLElement {
  const rows = h("div", { class: "shop-list" });
  const card = h("section", { class: "card shop", "data-testid": "shop" }, h("h2", {}, "商城 Shop"), rows);
  void Promise.all([itemPrices(), player])
    .then(([prices, p]) => {
      for (const item of ITEMS) {
        const price = prices.get(item.asset) ?? 0n;
        const buy = button(price > 0n ? `Buy · ${price} 银子` : "not for sale", `buy-${Asset[item.asset].toLowerCase()}`, () => {
          buy.disabled = true;
          buyConfirmed(me.sessionToken, item.asset)
            .then((yes) => (yes ? bought() : undefined))
            .catch((e) => banner(apiError(e), card))
            .finally(() => (buy.disabled = false));
        });
        buy.disabled = price <= 0n;
        rows.append(
          h(
            "div",
            { class: "shop-item" },
            h("strong", {}, item.name),
            h("small", {}, `${item.what} · you hold ${p ? held(p, item.asset) : "?"}`),
            buy,
          ),
        );
      }
    })
    .catch((e) => banner(apiError(e), card));
  return card;
}
