"""A throwaway certificate authority for development and tests (``mahjong certs``, ``make run``).

It writes what a deployment's cert-manager writes (:data:`infra.tls.TLS_FILES` in a directory
per workload), so development runs the production TLS and identity code, only with keys made
on this machine:

    .data/tls/ca.crt, ca.key            the CA (ECDSA P-256, a year)
    .data/tls/<workload>/tls.crt …      each workload's certificate (30 days): URI SAN
                                        spiffe://<trust domain>/<workload>, DNS SANs <workload>
                                        and localhost, IP SAN 127.0.0.1 and ::1

Files are made again when missing, when less than a day of validity is left, or when the CA
changed; the private keys are readable by their owner only.
"""

from __future__ import annotations

import datetime
import fcntl
import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from infra.tls import DEFAULT_TRUST_DOMAIN, OPERATOR, TLS_FILES, spiffe_id

DEFAULT_ROOT = Path(".data") / "tls"
CA_DAYS = 365
LEAF_DAYS = 30
RENEW_BEFORE = datetime.timedelta(days=1)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # whole files only: a reloading server never reads half of one


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _fresh(path: Path, issuer_pem: bytes | None = None) -> bool:
    """Whether the certificate at ``path`` exists, has more than RENEW_BEFORE left, and (with
    ``issuer_pem``) was signed by that CA."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return False
    if cert.not_valid_after_utc - _now() < RENEW_BEFORE:
        return False
    if issuer_pem is not None:
        issuer = x509.load_pem_x509_certificate(issuer_pem)
        try:
            cert.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, Exception):
            return False
    return True


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def ensure_ca(root: Path = DEFAULT_ROOT) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The development CA under ``root`` (made when missing or expiring)."""
    root.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = root / "ca.crt", root / "ca.key"
    if _fresh(cert_path) and key_path.is_file():
        key = serialization.load_pem_private_key(key_path.read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return x509.load_pem_x509_certificate(cert_path.read_bytes()), key
    key = _key()
    now = _now()
    name = _name("mahjong development CA")
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(key_path, _pem_key(key), private=True)
    _write(cert_path, _pem_cert(cert))
    return cert, key


def issue(
    root: Path,
    workload: str,
    *,
    trust_domain: str = DEFAULT_TRUST_DOMAIN,
    not_before: datetime.datetime | None = None,
    not_after: datetime.datetime | None = None,
    directory: Path | None = None,
) -> Path:
    """Write a certificate for ``workload`` signed by ``root``'s CA into ``directory`` (default
    ``root/<workload>``), in :data:`TLS_FILES`; its directory. Tests pass ``not_after`` in the
    past for an expired one."""
    ca_cert, ca_key = ensure_ca(root)
    key = _key()
    now = _now()
    sans: list[x509.GeneralName] = [
        x509.UniformResourceIdentifier(spiffe_id(workload, trust_domain)),
        x509.DNSName(workload),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(workload))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or now - datetime.timedelta(minutes=5))
        .not_valid_after(not_after or now + datetime.timedelta(days=LEAF_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    out = directory or root / workload
    out.mkdir(parents=True, exist_ok=True)
    cert_name, key_name, ca_name = TLS_FILES
    _write(out / key_name, _pem_key(key), private=True)
    _write(out / ca_name, _pem_cert(ca_cert))
    _write(out / cert_name, _pem_cert(cert))  # last: a watcher sees the new pair whole
    return out


def ensure(
    workloads: Iterable[str],
    root: Path = DEFAULT_ROOT,
    trust_domain: str = DEFAULT_TRUST_DOMAIN,
) -> Path:
    """The CA and a fresh certificate for each of ``workloads`` (and the operator) under
    ``root``; only what is missing, expiring or from another CA is made again. Processes doing
    this at once (test workers) take turns on a lock file."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _ensure(workloads, root, trust_domain)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _ensure(workloads: Iterable[str], root: Path, trust_domain: str) -> Path:
    ensure_ca(root)
    ca_pem = (root / "ca.crt").read_bytes()
    for workload in dict.fromkeys([*workloads, OPERATOR]):
        directory = root / workload
        current = (directory / "ca.crt").read_bytes() if (directory / "ca.crt").is_file() else b""
        if current != ca_pem or not _fresh(directory / "tls.crt", ca_pem):
            issue(root, workload, trust_domain=trust_domain)
    return root
