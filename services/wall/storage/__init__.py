"""The wall's storage: :class:`.repository.WallRepository` keeps each hand's wall in the store
(a header and one row per operation, :mod:`.rows`, written under the table's fence), and
:mod:`.retention` sweeps walls past their retention."""
