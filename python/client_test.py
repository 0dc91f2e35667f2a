"""The Python client against real local clusters: pstrain.LocalCluster
(`pstrain local --keep_running`, its processes talking over loopback),
driven through the package as a notebook or a pipeline would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import unittest
from typing import List

import grpc

import pstrain

PSTRAIN = os.environ["PSTRAIN_BINARY"]
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()

# Synthetic click logs, so the test needs no data set: a short job...
CLICKS_SPEC = {
    "name": "clicks",
    "model": {"logisticRegression": {}},
    "trainData": {"syntheticClicks": {"numExamples": 20000, "seed": 5}, "batchSize": 128},
    "evalData": {"syntheticClicks": {"numExamples": 2000, "seed": 5}, "batchSize": 1000},
    "optimizer": {"adagrad": {}, "learningRate": 0.1},
    "training": {"stepsPerLoop": 20},
    "stop": {"maxSteps": 200},
    "checkpoint": {"modelDir": "clicks"},
    "eval": {"metrics": ["loss", "auc"], "throttleSecs": 0},
}

# ...and the same job as text, running until it is stopped.
LONG_SPEC_TEXT = """
name: "long"
model { logistic_regression {} }
train_data { synthetic_clicks { num_examples: 20000 seed: 5 } batch_size: 128 }
eval_data { synthetic_clicks { num_examples: 2000 seed: 5 } batch_size: 1000 }
optimizer { adagrad {} learning_rate: 0.1 }
stop { max_steps: 100000000 }
checkpoint { model_dir: "long" }
eval { metrics: [ "loss", "auc" ] }
"""


def long_spec(model_dir: str) -> str:
    """LONG_SPEC_TEXT in a folder of its own, so that no job resumes
    another's checkpoints."""
    return LONG_SPEC_TEXT.replace('model_dir: "long"', f'model_dir: "{model_dir}"')


def local_cluster(name: str, **options: object) -> pstrain.LocalCluster:
    """A cluster of one shard and one worker whose files stay in the test's
    folder."""
    root = os.path.join(TMP, name)
    return pstrain.LocalCluster(PSTRAIN, ps=1, workers=1, checkpoint_root=root,
                                run_dir=os.path.join(root, "run"), **options)


def assert_no_process_left(cluster: pstrain.LocalCluster) -> None:
    try:
        os.killpg(cluster.pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"processes of group {cluster.pid} still run:\n"
                         + subprocess.run(["ps", "-g", str(cluster.pid), "-o", "pid,args"],
                                          capture_output=True, text=True).stdout)


def await_state(job: pstrain.Job, state: pstrain.JobState) -> None:
    """Returns once the job is in `state`, read from its own events."""
    for event in job.watch(progress=False, timeout=60):
        if isinstance(event, pstrain.StatusUpdate) and event.status.state == state:
            return
    raise AssertionError(f"{job} ended as {job.state}, never {state}")


class ClientTest(unittest.TestCase):
    cluster: pstrain.LocalCluster
    client: pstrain.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = local_cluster("plain")
        cls.client = cls.cluster.start()

    @classmethod
    def tearDownClass(cls) -> None:
        code = cls.cluster.stop()
        assert code == 0, f"pstrain local exited {code}:\n{cls.cluster.log()}"
        assert_no_process_left(cls.cluster)

    def test_a_job_from_a_dict_trains_and_its_events_scalars_and_export_read_back(self) -> None:
        job = self.client.submit(CLICKS_SPEC, request_id="clicks-from-python")
        self.assertRegex(job.id, r"^clicks-\d+$")
        # Sent again with its request id, the submit finds the same job.
        self.assertEqual(self.client.submit(CLICKS_SPEC, request_id="clicks-from-python").id,
                         job.id)
        self.assertEqual([j.job_id for j in self.client.list() if j.name == "clicks"], [job.id])

        events = list(job.watch())
        kinds = [type(event).__name__ for event in events]
        self.assertIsInstance(events[0], pstrain.StatusUpdate, kinds)  # a watch opens so
        self.assertIn("CheckpointSaved", kinds)
        self.assertIn("Evaluation", kinds)
        steps = [event.global_step for event in events if isinstance(event, pstrain.Progress)]
        self.assertTrue(steps, kinds)
        self.assertEqual(steps, sorted(steps))
        final = events[-1]
        assert isinstance(final, pstrain.StatusUpdate), kinds
        self.assertEqual(final.status.state, pstrain.JobState.SUCCEEDED)
        self.assertLessEqual(events[0].time, final.time)

        status = job.wait()
        self.assertIs(status.state, pstrain.JobState.SUCCEEDED)
        self.assertEqual(status.state, "SUCCEEDED")  # the enum reads as its name
        self.assertTrue(status.done)
        self.assertIs(status.stop_reason, pstrain.StopReason.MAX_STEPS)
        self.assertGreaterEqual(status.global_step, 200)
        self.assertEqual(status.raw.job_id, job.id)  # the message it was read from
        self.assertEqual(status.model_dir, os.path.join(TMP, "plain", "clicks"))
        self.assertLessEqual(status.submitted, status.started)
        self.assertLessEqual(status.started, status.ended)
        self.assertEqual(job.state, pstrain.JobState.SUCCEEDED)
        self.assertIn(job.id, [j.job_id for j in self.client.list(states=["SUCCEEDED"])])
        self.assertNotIn(job.id,
                         [j.job_id for j in self.client.list(states=[pstrain.JobState.RUNNING])])
        final_checkpoint = status.checkpoints[-1]
        self.assertTrue(final_checkpoint.final)
        self.assertTrue(os.path.isdir(final_checkpoint.path), final_checkpoint)

        scalars = job.scalars()
        train_loss = [s for s in scalars if s.split == "train" and s.tag == "loss"]
        auc = [s for s in scalars if s.split == "eval" and s.tag == "auc"]
        self.assertTrue(train_loss, scalars[:5])
        self.assertTrue(auc, scalars[:5])
        self.assertGreater(auc[-1].value, 0.5)  # better than chance
        # The file and the coordinator agree on the final evaluation.
        self.assertAlmostEqual(auc[-1].value, status.last_eval_metrics["auc"], places=6)

        frame = job.scalars_frame()
        self.assertEqual(list(frame.columns), ["split", "tag", "step", "wall_time", "value"])
        self.assertEqual(len(frame), len(scalars))
        self.assertEqual(frame[(frame.split == "eval") & (frame.tag == "auc")]["value"].iloc[-1],
                         auc[-1].value)

        export = job.export()
        self.assertEqual(export.path, status.export_path)
        self.assertEqual(export.step, status.best_checkpoint_step)
        self.assertTrue(os.listdir(export.path), export)

    def test_a_spec_as_text_json_or_a_file_is_the_same_spec(self) -> None:
        # A folder of its own: another test trains CLICKS_SPEC to its end.
        spec = dict(CLICKS_SPEC, checkpoint={"modelDir": "clicks-as-text"})
        as_dict = self.client.validate(spec)
        as_json = self.client.validate(json.dumps(spec))
        path = os.path.join(TMP, "long.pbtxt")
        with open(path, "w") as file:
            file.write(LONG_SPEC_TEXT)
        from_file = self.client.validate(path)
        from_text = self.client.validate(LONG_SPEC_TEXT)
        self.assertEqual(as_dict, as_json)
        self.assertEqual(from_file, from_text)
        self.assertEqual(from_text.name, "long")
        # The coordinator filled in defaults the text left out.
        self.assertTrue(from_text.checkpoint.model_dir.endswith("long"), from_text)

    def test_errors_carry_the_status_and_the_coordinators_message(self) -> None:
        with self.assertRaises(pstrain.NotFound) as caught:
            self.client.job("no-such-job").status()
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("no-such-job", caught.exception.message)
        with self.assertRaises(pstrain.NotFound):
            self.client.export("no-such-job")

        bad = dict(CLICKS_SPEC, optimizer={"adagrad": {}, "learningRate": -1})
        with self.assertRaises(pstrain.InvalidSpec) as caught:
            self.client.submit(bad)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("optimizer.learning_rate", caught.exception.message)

        # What cannot be read is refused before anything is sent.
        with self.assertRaisesRegex(ValueError, "no_such_field"):
            pstrain.to_job_spec('name: "x" no_such_field: 1')
        with self.assertRaisesRegex(ValueError, "cannot read the job spec"):
            pstrain.to_job_spec(os.path.join(TMP, "missing.pbtxt"))
        with self.assertRaisesRegex(ValueError, "unknown job_state 'DONE'; one of QUEUED"):
            self.client.list(states=["DONE"])

        with pstrain.Client("127.0.0.1:1", timeout=5) as nowhere:
            with self.assertRaises(pstrain.Unreachable) as caught:
                nowhere.list()
        self.assertIn("cannot reach the coordinator at 127.0.0.1:1", caught.exception.message)

    def test_a_running_job_is_watched_with_a_timeout_stopped_and_seen_on_the_members(
            self) -> None:
        job = self.client.submit(LONG_SPEC_TEXT)
        self.addCleanup(job.stop, immediately=True)  # when it fails: the next job runs
        await_state(job, pstrain.JobState.RUNNING)
        with self.assertRaises(pstrain.GaveUpWaiting):
            job.wait(timeout=1)
        roles = sorted(m.role for m in self.client.members())
        self.assertEqual(roles, ["EVALUATOR", "PS", "WORKER"])
        self.assertEqual([m.task for m in self.client.members() if m.role == "PS"], ["ps/0"])
        self.assertEqual(self.client.cluster().running_job_id, job.id)
        # A shutdown while a job runs is refused unless it may stop the job.
        with self.assertRaises(pstrain.WrongState) as caught:
            self.client.shutdown()
        self.assertIn(job.id, caught.exception.message)

        job.stop()
        final = job.wait(timeout=120)
        self.assertIs(final.state, pstrain.JobState.STOPPED)
        self.assertIs(final.stop_reason, pstrain.StopReason.USER)

    def test_an_async_watch_leaves_the_event_loop_free(self) -> None:
        job = self.client.submit(long_spec("long-async"))
        self.addCleanup(job.stop, immediately=True)
        # What happened, in order, on one event loop: the watch's events and
        # another task's work done while the watch was open.
        happened: List[str] = []

        async def watch(trained: asyncio.Event) -> None:
            async for event in job.watch_async():
                if isinstance(event, pstrain.Progress) and not trained.is_set():
                    happened.append("progress")
                    trained.set()
                if isinstance(event, pstrain.StatusUpdate) and event.status.done \
                        and happened[-1:] != [event.status.state.value]:
                    happened.append(event.status.state.value)

        async def stop_once_trained(trained: asyncio.Event) -> None:
            await trained.wait()
            happened.append("stopping")
            # A blocking call, run off the loop as a notebook would.
            await asyncio.get_running_loop().run_in_executor(None, job.stop)

        async def main() -> pstrain.JobStatus:
            trained = asyncio.Event()
            await asyncio.wait_for(asyncio.gather(watch(trained), stop_once_trained(trained)),
                                   timeout=120)
            return await job.wait_async(timeout=10)

        final = asyncio.run(main())
        self.assertEqual(happened, ["progress", "stopping", "STOPPED"])
        self.assertIs(final.state, pstrain.JobState.STOPPED)


class LocalClusterTest(unittest.TestCase):
    """How a local cluster starts and ends, whatever happens in between."""

    def test_an_exception_in_the_block_stops_the_cluster_and_its_job(self) -> None:
        cluster = local_cluster("exception")
        with self.assertRaisesRegex(RuntimeError, "raised in the block"):
            with cluster as client:
                job = client.submit(LONG_SPEC_TEXT)
                await_state(job, pstrain.JobState.RUNNING)
                raise RuntimeError("raised in the block")
        self.assertEqual(cluster.wait(timeout=0), 0, cluster.log())
        assert_no_process_left(cluster)

    def test_a_shutdown_ends_the_cluster_which_the_block_then_finds_ended(self) -> None:
        cluster = local_cluster("shutdown")
        with cluster as client:
            job = client.submit(LONG_SPEC_TEXT)
            await_state(job, pstrain.JobState.RUNNING)
            client.shutdown(stop_running_job=True)
            self.assertEqual(cluster.wait(timeout=60), 0, cluster.log())
        assert_no_process_left(cluster)

    def test_a_cluster_that_cannot_start_says_why(self) -> None:
        cluster = local_cluster("refused", flags=["--max_restarts=-1"])
        with self.assertRaisesRegex(pstrain.LocalClusterError,
                                    r"exited with 2 before the cluster came up(.|\n)*"
                                    r"--max_restarts >= 0"):
            cluster.start()
        assert_no_process_left(cluster)

    def test_a_client_that_cannot_be_made_leaves_no_cluster_behind(self) -> None:
        missing = os.path.join(TMP, "missing-ca.crt")
        cluster = local_cluster("bad-client", client_options={"tls_ca": missing})
        with self.assertRaisesRegex(ValueError, f"tls_ca: cannot read {missing}"):
            cluster.start()
        self.assertEqual(cluster.wait(timeout=0), 0, cluster.log())
        assert_no_process_left(cluster)

    def test_the_program_is_found_or_the_error_says_how_to_provide_it(self) -> None:
        path = os.environ.pop("PATH")
        binary = os.environ.pop("PSTRAIN_BINARY")
        try:
            os.environ["PATH"] = TMP  # no pstrain there
            with self.assertRaisesRegex(FileNotFoundError, r"set \$PSTRAIN_BINARY"):
                pstrain.LocalCluster()
            os.environ["PSTRAIN_BINARY"] = os.path.join(TMP, "missing")
            with self.assertRaisesRegex(FileNotFoundError,
                                        r"\$PSTRAIN_BINARY=.*missing is not an executable"):
                pstrain.LocalCluster()
            os.environ["PSTRAIN_BINARY"] = binary
            self.assertEqual(pstrain.LocalCluster(run_dir=TMP).binary, binary)
            with self.assertRaisesRegex(FileNotFoundError, r"binary=/etc is not an executable"):
                pstrain.LocalCluster("/etc")
        finally:
            os.environ["PATH"] = path
            os.environ["PSTRAIN_BINARY"] = binary


def make_certificates(root: str) -> None:
    """A CA, and a server and a client certificate it signs."""
    def openssl(*args: str) -> None:
        subprocess.run(["/usr/bin/openssl", *args], check=True, capture_output=True)
    with open(os.path.join(root, "san.cnf"), "w") as file:
        file.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{root}/ca.key",
            "-out", f"{root}/ca.crt", "-days", "1", "-subj", "/CN=pstrain test CA")
    for name in ("server", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{root}/{name}.key", "-out",
                f"{root}/{name}.csr", "-subj", f"/CN=pstrain {name}")
        openssl("x509", "-req", "-in", f"{root}/{name}.csr", "-CA", f"{root}/ca.crt", "-CAkey",
                f"{root}/ca.key", "-CAcreateserial", "-out", f"{root}/{name}.crt", "-days", "1",
                "-extfile", f"{root}/san.cnf")


class SecureClusterTest(unittest.TestCase):
    """Mutual TLS and a client token, taken as the CLI takes them."""
    root: str
    cluster: pstrain.LocalCluster
    client: pstrain.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.root = os.path.join(TMP, "secure-files")
        os.makedirs(cls.root, exist_ok=True)
        make_certificates(cls.root)
        for name, token in (("client", "s3cret-client"), ("cluster", "s3cret-cluster"),
                            ("wrong", "not-the-token")):
            with open(os.path.join(cls.root, name + ".token"), "w") as file:
                file.write(token + "\n")
        cls.cluster = local_cluster(
            "secure", evaluator=False,
            flags=[f"--tls_cert={cls.root}/server.crt", f"--tls_key={cls.root}/server.key",
                   f"--tls_ca={cls.root}/ca.crt", "--tls_client_auth=require",
                   f"--client_token_file={cls.root}/client.token",
                   f"--cluster_token_file={cls.root}/cluster.token"],
            client_options={"tls_ca": f"{cls.root}/ca.crt",
                            "tls_cert": f"{cls.root}/client.crt",
                            "tls_key": f"{cls.root}/client.key",
                            "client_token_file": f"{cls.root}/client.token"})
        cls.client = cls.cluster.start()

    @classmethod
    def tearDownClass(cls) -> None:
        code = cls.cluster.stop()
        assert code == 0, f"pstrain local exited {code}:\n{cls.cluster.log()}"
        assert_no_process_left(cls.cluster)

    def client_with(self, token: str = "", certificate: bool = True) -> pstrain.Client:
        files = {"tls_ca": f"{self.root}/ca.crt"}
        if certificate:
            files.update(tls_cert=f"{self.root}/client.crt", tls_key=f"{self.root}/client.key")
        if token:
            files["client_token_file"] = f"{self.root}/{token}.token"
        return pstrain.Client(self.cluster.address, timeout=10, **files)

    def test_the_right_token_over_tls_is_served(self) -> None:
        # The cluster's own client, made from client_options.
        self.assertEqual(self.client.list(), [])
        self.assertEqual(len(self.client.members()), 2)

    def test_a_missing_or_wrong_token_is_refused(self) -> None:
        for token in ("", "wrong"):
            with self.client_with(token) as client, \
                    self.assertRaises(pstrain.AuthRefused) as caught:
                client.list()
            self.assertEqual(caught.exception.code, grpc.StatusCode.UNAUTHENTICATED)

    def test_the_token_may_come_from_the_environment(self) -> None:
        os.environ["PSTRAIN_TOKEN"] = "s3cret-client"
        try:
            with self.client_with() as client:
                self.assertEqual(client.list(), [])
        finally:
            del os.environ["PSTRAIN_TOKEN"]

    def test_an_unreadable_or_empty_token_file_is_refused_naming_it(self) -> None:
        missing = f"{self.root}/missing.token"
        with self.assertRaisesRegex(ValueError, f"client_token_file: cannot read {missing}"):
            pstrain.Client(self.cluster.address, client_token_file=missing)
        empty = f"{self.root}/empty.token"
        open(empty, "w").close()
        with self.assertRaisesRegex(ValueError, f"client_token_file: {empty} is empty"):
            pstrain.Client(self.cluster.address, client_token_file=empty)
        with self.assertRaisesRegex(ValueError, "tls_ca: cannot read"):
            pstrain.Client(self.cluster.address, tls_ca=f"{self.root}/missing.crt")

    def test_without_a_client_certificate_the_handshake_fails(self) -> None:
        with self.client_with("client", certificate=False) as client:
            with self.assertRaises(pstrain.Unreachable):
                client.list()


if __name__ == "__main__":
    unittest.main()
