"""How to reach a coordinator: its address, TLS and token, read once and
used for both the blocking channel and the asyncio one (grpc.aio)."""

from __future__ import annotations

import dataclasses
import os
from typing import List, Optional, Sequence, Tuple

import grpc
import grpc.aio

DEFAULT_COORDINATOR = "localhost:7070"
COORDINATOR_ENV = "PSTRAIN_COORDINATOR"
TOKEN_ENV = "PSTRAIN_TOKEN"

Metadata = Tuple[Tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class Connection:
    """The settings of a coordinator's channel; immutable, so safe to share
    between threads and event loops.

    Attributes:
      address: host:port of the coordinator.
      credentials: the TLS credentials; None for a plain channel.
      options: gRPC channel options (the TLS server name override).
      metadata: sent with every call (the bearer token).
    """

    address: str
    credentials: Optional[grpc.ChannelCredentials]
    options: Sequence[Tuple[str, str]]
    metadata: Metadata

    def open(self) -> grpc.Channel:
        """A blocking channel; connects on first use."""
        if self.credentials is None:
            return grpc.insecure_channel(self.address, list(self.options))
        return grpc.secure_channel(self.address, self.credentials, list(self.options))

    def open_async(self) -> grpc.aio.Channel:
        """An asyncio channel bound to the running event loop, so it is
        opened by the coroutine that uses it."""
        if self.credentials is None:
            return grpc.aio.insecure_channel(self.address, list(self.options))
        return grpc.aio.secure_channel(self.address, self.credentials, list(self.options))


def connect(address: Optional[str] = None, *, tls_ca: Optional[str] = None,
            tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
            tls_server_name: Optional[str] = None,
            client_token_file: Optional[str] = None) -> Connection:
    """The Connection the arguments of pstrain.Client describe. ValueError
    names a file that cannot be read or a TLS setting without its pair."""
    address = address or os.environ.get(COORDINATOR_ENV) or DEFAULT_COORDINATOR
    token = _read_token(client_token_file)
    metadata: Metadata = (("authorization", "Bearer " + token),) if token else ()
    if not (tls_ca or tls_cert):
        if tls_key or tls_server_name:
            raise ValueError("tls_key and tls_server_name need tls_cert or tls_ca")
        return Connection(address, None, (), metadata)
    options: List[Tuple[str, str]] = []
    if tls_server_name:
        options.append(("grpc.ssl_target_name_override", tls_server_name))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read_pem(tls_ca, "tls_ca"),
        private_key=_read_pem(tls_key, "tls_key"),
        certificate_chain=_read_pem(tls_cert, "tls_cert"))
    return Connection(address, credentials, tuple(options), metadata)


def _read_token(path: Optional[str]) -> str:
    if not path:
        return os.environ.get(TOKEN_ENV, "").strip()
    try:
        with open(path, encoding="utf-8") as file:
            token = file.read().strip()
    except OSError as error:
        raise ValueError(f"client_token_file: cannot read {path}: {error.strerror}") from None
    if not token:
        raise ValueError(f"client_token_file: {path} is empty")
    return token


def _read_pem(path: Optional[str], what: str) -> Optional[bytes]:
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise ValueError(f"{what}: cannot read {path}: {error.strerror}") from None
