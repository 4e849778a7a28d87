"""The OpenID Connect issuers (签发方) a deployment trusts: typed, validated configuration.

One issuer is ``iss`` (the exact ``iss`` claim of its ID tokens), ``aud`` (the client id the
tokens must name: this deployment), ``jwks`` (the https URL of its key set) and optionally the
algorithms it signs with and the clock skew tolerated. Several issuers may be configured; the
flag form is a ``;``-separated list of ``key=value,...`` items::

    --issuers 'iss=https://login.studio.example,aud=mahjong-prod,jwks=https://login.studio.example/.well-known/jwks.json;iss=https://accounts.google.com,aud=1234.apps.googleusercontent.com,jwks=https://www.googleapis.com/oauth2/v3/certs,algs=RS256'

(or ``MAHJONG_MATCHMAKING_ISSUERS``). The development issuer (:mod:`~devkit.dev_issuer`) has the
``iss`` :data:`DEV_ISSUER`, which a production server refuses (:func:`refuse_dev_issuer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from shared.errors import InvalidArgument

# The only asymmetric algorithms accepted (issue 21): never "none", never HMAC (a public key
# used as an HMAC secret is the classic forgery).
SUPPORTED_ALGORITHMS = ("RS256", "ES256", "EdDSA")
DEV_ISSUER = "urn:mahjong:dev-issuer"
DEFAULT_LEEWAY_SECONDS = 60
DEFAULT_REFETCH_SECONDS = 30.0  # an unknown kid fetches the JWKS again at most this often
MAX_LEEWAY_SECONDS = 300
_KEYS = frozenset({"iss", "aud", "jwks", "algs", "leeway", "refetch", "roles"})
# The role an issuer's token names (in its ``roles`` claim, see :class:`Issuer`) to make its
# session an operator's: the web console's operators (issue 32).
OPERATOR_ROLE = "operator"


@dataclass(frozen=True, slots=True)
class Issuer:
    """One trusted issuer. ``algorithms`` is a subset of :data:`SUPPORTED_ALGORITHMS`."""

    issuer: str
    audience: str
    jwks_url: str
    algorithms: tuple[str, ...] = SUPPORTED_ALGORITHMS
    leeway_seconds: int = DEFAULT_LEEWAY_SECONDS
    refetch_seconds: float = DEFAULT_REFETCH_SECONDS
    # The claim (a list of role names, or one name) whose :data:`OPERATOR_ROLE` makes a sign-in
    # an operator's session; "" (the default): this issuer grants no role — only the studio's
    # own issuer should (``roles=roles`` in the flag), never a public one.
    roles_claim: str = ""

    def __post_init__(self) -> None:
        if not self.issuer:
            raise InvalidArgument("an issuer has an empty iss", field="issuers")
        if not self.audience:
            raise InvalidArgument(f"issuer {self.issuer!r} has an empty aud", field="issuers")
        scheme = urlparse(self.jwks_url).scheme
        if scheme not in ("http", "https"):
            raise InvalidArgument(
                f"issuer {self.issuer!r}: jwks {self.jwks_url!r} is not an http(s) URL",
                field="issuers",
            )
        bad = [a for a in self.algorithms if a not in SUPPORTED_ALGORITHMS]
        if bad or not self.algorithms:
            raise InvalidArgument(
                f"issuer {self.issuer!r}: algorithms {list(self.algorithms)} must be among "
                f"{list(SUPPORTED_ALGORITHMS)}",
                field="issuers",
            )
        if not 0 <= self.leeway_seconds <= MAX_LEEWAY_SECONDS:
            raise InvalidArgument(
                f"issuer {self.issuer!r}: leeway {self.leeway_seconds} s out of range "
                f"0-{MAX_LEEWAY_SECONDS}",
                field="issuers",
            )
        if self.refetch_seconds < 0:
            raise InvalidArgument(f"issuer {self.issuer!r}: negative refetch", field="issuers")

    @property
    def development(self) -> bool:
        return self.issuer == DEV_ISSUER


def parse_issuer(spec: str) -> Issuer:
    """One ``iss=...,aud=...,jwks=...[,algs=RS256+ES256][,leeway=60][,refetch=30][,roles=CLAIM]``
    item."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or key not in _KEYS:
            raise InvalidArgument(
                f"issuer item {part.strip()!r} is not one of {sorted(_KEYS)} = value",
                field="issuers",
            )
        fields[key] = value.strip()
    missing = [k for k in ("iss", "aud", "jwks") if not fields.get(k)]
    if missing:
        raise InvalidArgument(f"issuer {spec!r} lacks {', '.join(missing)}", field="issuers")
    try:
        leeway = int(fields.get("leeway", DEFAULT_LEEWAY_SECONDS))
        refetch = float(fields.get("refetch", DEFAULT_REFETCH_SECONDS))
    except ValueError as exc:
        raise InvalidArgument(f"issuer {spec!r}: {exc}", field="issuers") from None
    algs = tuple(a for a in fields.get("algs", "").split("+") if a) or SUPPORTED_ALGORITHMS
    return Issuer(
        fields["iss"], fields["aud"], fields["jwks"], algs, leeway, refetch, fields.get("roles", "")
    )


def parse_issuers(text: str) -> tuple[Issuer, ...]:
    """The ``;``-separated issuers of a flag (empty text: none); an ``iss`` given twice is an
    error (which one's keys would decide?)."""
    out = tuple(parse_issuer(s) for s in text.split(";") if s.strip())
    names = [i.issuer for i in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidArgument(f"issuer {twice[0]!r} is configured twice", field="issuers")
    return out


def format_issuer(issuer: Issuer) -> str:
    """The flag form of one issuer (what :func:`parse_issuer` reads back)."""
    return (
        f"iss={issuer.issuer},aud={issuer.audience},jwks={issuer.jwks_url},"
        f"algs={'+'.join(issuer.algorithms)},leeway={issuer.leeway_seconds},"
        f"refetch={issuer.refetch_seconds:g}"
        + (f",roles={issuer.roles_claim}" if issuer.roles_claim else "")
    )


def refuse_dev_issuer(issuers: tuple[Issuer, ...], production: bool) -> None:
    """A production server never trusts the development issuer (anyone holding the checkout's
    key could sign in as anyone)."""
    if production and any(i.development for i in issuers):
        raise InvalidArgument(
            f"the development issuer {DEV_ISSUER} is configured on a production server "
            "(--production): configure the studio's issuer instead",
            field="issuers",
        )
