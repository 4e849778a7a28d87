"""The economy (RULES-items): the ledger (:mod:`.ledger`, its repository :mod:`.books`), items
for silver (:mod:`.items`), room cards (:mod:`.room_cards`), double cards (:mod:`.double_cards`),
the cover a seat needs (:mod:`.hand_cover`), public balances (:mod:`.balances`), the daily
reconciliation (:mod:`.reconciliation`), and the desks the facade composes (:mod:`.desk`,
:mod:`.double_card_desk`)."""
