"""A whole cluster on this machine for as long as a `with` block runs:
`pstrain local --keep_running` as a Python context manager.

    with pstrain.LocalCluster(workers=2) as client:
        job = client.submit("examples/fashion_mnist_mlp.pbtxt")
        job.wait()
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
from typing import IO, Any, List, Mapping, Optional, Sequence, Union

from pstrain.client import Client

BINARY_ENV = "PSTRAIN_BINARY"

# What `pstrain local` prints once every process answers its health check.
_READY_LINE = re.compile(r"The coordinator is at ([^\s;]+?)[;.]?(\s|$)")


class LocalClusterError(RuntimeError):
    """`pstrain local` did not come up, or did not stop cleanly; the message
    says how it ended and shows the end of its output."""


class LocalCluster:
    """Starts `pstrain local --keep_running` (a coordinator, parameter
    servers, workers and an evaluator as processes on loopback), waits until
    each process answers its health check, and yields a Client connected to
    it. On leaving the block, also by an exception, it stops the cluster as
    Ctrl-C does and waits for it; a process still running after
    `stop_timeout` seconds is killed, so none is left behind. A job still
    running then is cut short.

    Args:
      binary: the `pstrain` program; default $PSTRAIN_BINARY, else `pstrain`
        on PATH. FileNotFoundError names the places looked at when none is.
      ps, workers, evaluator: the cluster's size, as `pstrain local`'s --ps
        (0: sized for this machine), --workers and --evaluator.
      checkpoint_root: the folder every job's model_dir must lie under
        (--checkpoint_root); default pstrain's own, ~/pstrain.
      run_dir: where the processes log; default a new temporary folder.
        `pstrain local`'s own output goes to <run_dir>/local.log.
      flags: more flags of `pstrain local` (TLS, tokens: see
        `pstrain local --help`).
      client_options: keyword arguments of the Client it yields (TLS files,
        token file, timeout).
      start_timeout: seconds to wait for a healthy cluster.
      stop_timeout: seconds to wait for a clean stop before killing.

    The coordinator listens on a free loopback port (`address`). Not
    thread-safe: start and stop it from one thread; the Client it yields
    may be shared.
    """

    def __init__(self, binary: Union[str, "os.PathLike[str]", None] = None, *, ps: int = 0,
                 workers: int = 2, evaluator: bool = True, checkpoint_root: Optional[str] = None,
                 run_dir: Optional[str] = None, flags: Sequence[str] = (),
                 client_options: Optional[Mapping[str, Any]] = None,
                 start_timeout: float = 120.0, stop_timeout: float = 60.0) -> None:
        self.binary = find_binary(binary)
        self.run_dir = run_dir or tempfile.mkdtemp(prefix="pstrain-local-")
        self.log_path = os.path.join(self.run_dir, "local.log")
        self._arguments: List[str] = [
            self.binary, "local", "--keep_running", "--coordinator_address=127.0.0.1:0",
            f"--ps={ps}", f"--workers={workers}", f"--evaluator={str(evaluator).lower()}",
            "--run_dir=" + self.run_dir]
        if checkpoint_root:
            self._arguments.append("--checkpoint_root=" + checkpoint_root)
        self._arguments.extend(flags)
        self._client_options = dict(client_options or {})
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._process: Optional[subprocess.Popen[str]] = None
        self._reader: Optional[threading.Thread] = None
        self._ready = threading.Event()
        self._address: Optional[str] = None  # set by the reader before _ready
        self._client: Optional[Client] = None
        self._finalizer: Optional[weakref.finalize] = None

    @property
    def address(self) -> str:
        """host:port of the coordinator, once started."""
        if self._address is None:
            raise LocalClusterError("the local cluster has not started")
        return self._address

    @property
    def client(self) -> Client:
        """The client start() made."""
        if self._client is None:
            raise LocalClusterError("the local cluster has not started")
        return self._client

    @property
    def pid(self) -> Optional[int]:
        """The process id of `pstrain local` (its processes share its
        process group); None before start()."""
        return self._process.pid if self._process else None

    def log(self) -> str:
        """Everything `pstrain local` printed so far."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as file:
                return file.read()
        except FileNotFoundError:
            return ""

    def start(self) -> Client:
        """Starts the cluster and returns a client of it once every process
        is healthy. LocalClusterError, with the end of its output, when
        `pstrain local` exits first or does not come up in time (then it is
        stopped)."""
        if self._process is not None:
            raise LocalClusterError("the local cluster was started already")
        os.makedirs(self.run_dir, exist_ok=True)
        # The cluster's processes in a process group of their own, which
        # stop() can end whole; a Ctrl-C meant for Python reaches the
        # cluster only through stop().
        self._process = subprocess.Popen(
            self._arguments, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
        self._finalizer = weakref.finalize(self, _end_process_group, self._process,
                                           self._stop_timeout)
        self._reader = threading.Thread(target=self._read_output, args=(self._process.stdout,),
                                        name="pstrain-local-output", daemon=True)
        self._reader.start()
        try:
            return self._await_healthy()
        except BaseException:
            # Whatever stopped the wait (a timeout, bad client_options,
            # Ctrl-C in a notebook) leaves no cluster behind.
            self.stop()
            raise

    def _await_healthy(self) -> Client:
        if not self._ready.wait(self._start_timeout):
            raise LocalClusterError(f"pstrain local did not come up in {self._start_timeout} s; "
                                    f"stopped it\n{self._tail()}")
        if self._address is None:
            code = self.wait(self._stop_timeout)
            raise LocalClusterError(f"pstrain local exited with {code} before the cluster "
                                    f"came up\n{self._tail()}")
        self._client = Client(self._address, **self._client_options)
        return self._client

    def stop(self) -> int:
        """Stops the cluster (as Ctrl-C does; killed after stop_timeout) and
        returns the exit code of `pstrain local`: 0 when every process
        exited cleanly, negative for a signal. Stopping twice is harmless."""
        if self._process is None or self._finalizer is None:
            return 0
        if self._client is not None:
            self._client.close()
        code: int = self._finalizer() if self._finalizer.alive else self._process.returncode
        if self._reader is not None:
            self._reader.join()
        return code

    def wait(self, timeout: Optional[float] = None) -> int:
        """Waits for `pstrain local` to exit by itself (after
        Client.shutdown(), or a process that died for good) and returns its
        exit code. subprocess.TimeoutExpired when it still runs after
        `timeout` seconds."""
        if self._process is None:
            raise LocalClusterError("the local cluster has not started")
        return self._process.wait(timeout)

    def __enter__(self) -> Client:
        return self.start()

    def __exit__(self, exc_type: Optional[type], *exc_rest: object) -> None:
        code = self.stop()
        # An exception from the block says more than how the cluster ended.
        if code != 0 and exc_type is None:
            raise LocalClusterError(f"pstrain local exited with {code}\n{self._tail()}")

    def _read_output(self, stream: IO[str]) -> None:
        with stream, open(self.log_path, "a", encoding="utf-8") as log:
            for line in stream:
                log.write(line)
                log.flush()
                match = _READY_LINE.search(line)
                if match and self._address is None:
                    self._address = match.group(1)
                    self._ready.set()
        self._ready.set()  # exited: start() need not wait any longer

    def _tail(self, lines: int = 20) -> str:
        text = self.log().rstrip("\n").split("\n")[-lines:]
        return f"--- end of {self.log_path} ---\n" + "\n".join(text)


def find_binary(binary: Union[str, "os.PathLike[str]", None] = None) -> str:
    """The `pstrain` program: `binary`, else $PSTRAIN_BINARY, else `pstrain`
    on PATH. FileNotFoundError says which was tried and how to provide one."""
    if binary is not None:
        path, source = os.fspath(binary), "binary="
    elif os.environ.get(BINARY_ENV):
        path, source = os.environ[BINARY_ENV], "$" + BINARY_ENV + "="
    else:
        found = shutil.which("pstrain")
        if found is None:
            raise FileNotFoundError(
                "no pstrain program: pass LocalCluster(binary=...), set $PSTRAIN_BINARY, or put "
                "pstrain on PATH (`bazel build -c opt //client:pstrain` builds it as "
                "bazel-bin/client/pstrain)")
        return os.path.abspath(found)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise FileNotFoundError(f"{source}{path} is not an executable file")
    return os.path.abspath(path)


def _end_process_group(process: subprocess.Popen[str], timeout: float) -> int:
    """Stops `pstrain local` as Ctrl-C does and waits for it; then kills
    whatever is left of its process group. Its exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        # pstrain local stops its children before it exits; this catches
        # any that outlived a crash or the kill.
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return process.wait()
