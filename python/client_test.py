"""The Python client against real local clusters: `pstrain local
--keep_running`, its processes talking over loopback, driven through the
package as a notebook or a pipeline would."""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

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


class LocalCluster:
    """`pstrain local --keep_running` on a free port, stopped with Ctrl-C."""

    def __init__(self, name, *flags):
        self.root = os.path.join(TMP, name)
        os.makedirs(self.root, exist_ok=True)
        self.log_path = os.path.join(self.root, "local.log")
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [PSTRAIN, "local", "--keep_running", "--coordinator_address=127.0.0.1:0",
             "--ps=1", "--workers=1", "--checkpoint_root=" + self.root,
             "--run_dir=" + os.path.join(self.root, "run"), *flags],
            stdout=self._log, stderr=subprocess.STDOUT)
        self.address = self._await_address()

    def _await_address(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            match = re.search(r"The coordinator is at (\S+?)[;.]?\s", self.log())
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                raise AssertionError(f"pstrain local exited {self.process.returncode}:\n"
                                     + self.log())
            time.sleep(0.2)
        raise AssertionError("pstrain local did not come up in 60 s:\n" + self.log())

    def log(self):
        with open(self.log_path) as file:
            return file.read()

    def stop(self):
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=60)
        self._log.close()
        return code


def await_state(client, job_id, state, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pstrain.state_name(client.status(job_id).state) == state:
            return True
        time.sleep(0.1)
    return False


class ClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = LocalCluster("plain")
        cls.client = pstrain.Client(cls.cluster.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.cluster.stop()
        assert code == 0, f"pstrain local exited {code}:\n{cls.cluster.log()}"

    def test_a_job_from_a_dict_trains_and_its_events_and_scalars_read_back(self):
        job_id = self.client.submit(CLICKS_SPEC, request_id="clicks-from-python")
        self.assertRegex(job_id, r"^clicks-\d+$")
        # Sent again with its request id, the submit finds the same job.
        self.assertEqual(self.client.submit(CLICKS_SPEC, request_id="clicks-from-python"), job_id)
        self.assertEqual([j.job_id for j in self.client.list() if j.name == "clicks"], [job_id])

        events = list(self.client.watch(job_id))
        kinds = [event.WhichOneof("event") for event in events]
        self.assertEqual(kinds[0], "status", kinds)  # a watch opens with the status
        self.assertIn("checkpoint", kinds)
        self.assertIn("eval", kinds)
        steps = [event.progress.global_step for event in events if event.HasField("progress")]
        self.assertTrue(steps, kinds)
        self.assertEqual(steps, sorted(steps))
        final = events[-1]
        self.assertEqual(pstrain.state_name(final.status.state), "SUCCEEDED", final)

        status = self.client.status(job_id)
        self.assertEqual(pstrain.state_name(status.state), "SUCCEEDED")
        self.assertGreaterEqual(status.global_step, 200)
        self.assertIn(job_id, [job.job_id for job in self.client.list()])
        self.assertIn(job_id, [job.job_id for job in self.client.list(states=["SUCCEEDED"])])
        self.assertNotIn(job_id, [job.job_id for job in self.client.list(states=["RUNNING"])])

        scalars = self.client.scalars(job_id)
        train_loss = [s for s in scalars if s.split == "train" and s.tag == "loss"]
        auc = [s for s in scalars if s.split == "eval" and s.tag == "auc"]
        self.assertTrue(train_loss, scalars[:5])
        self.assertTrue(auc, scalars[:5])
        self.assertGreater(auc[-1].value, 0.5)  # better than chance
        # The file and the coordinator agree on the final evaluation.
        self.assertAlmostEqual(auc[-1].value, status.last_eval_metrics["auc"], places=6)

        frame = self.client.scalars_frame(job_id)
        self.assertEqual(list(frame.columns), ["split", "tag", "step", "wall_time", "value"])
        self.assertEqual(len(frame), len(scalars))
        self.assertEqual(frame[(frame.split == "eval") & (frame.tag == "auc")]["value"].iloc[-1],
                         auc[-1].value)

    def test_a_spec_as_text_json_or_a_file_is_the_same_spec(self):
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

    def test_errors_carry_the_status_and_the_coordinators_message(self):
        with self.assertRaises(pstrain.NotFound) as caught:
            self.client.status("no-such-job")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("no-such-job", caught.exception.message)

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

        with pstrain.Client("127.0.0.1:1", timeout=5) as nowhere:
            with self.assertRaises(pstrain.Unreachable) as caught:
                nowhere.list()
        self.assertIn("cannot reach the coordinator at 127.0.0.1:1", caught.exception.message)

    def test_a_running_job_is_watched_with_a_timeout_stopped_and_seen_on_the_members(self):
        job_id = self.client.submit(LONG_SPEC_TEXT)
        self.assertTrue(await_state(self.client, job_id, "RUNNING"), job_id)
        with self.assertRaises(pstrain.GaveUpWaiting):
            for _ in self.client.watch(job_id, timeout=1):
                pass
        members = self.client.members()
        roles = sorted(pstrain.protos.cluster_pb2.TaskType.Name(m.task.type) for m in members)
        self.assertEqual(roles, ["TASK_TYPE_EVALUATOR", "TASK_TYPE_PS", "TASK_TYPE_WORKER"])
        self.assertEqual(self.client.cluster().running_job_id, job_id)

        self.client.stop(job_id)
        final = self.client.wait(job_id, timeout=120)
        self.assertEqual(pstrain.state_name(final.state), "STOPPED")


def make_certificates(root):
    """A CA, and a server and a client certificate it signs."""
    def openssl(*args):
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

    @classmethod
    def setUpClass(cls):
        cls.root = os.path.join(TMP, "secure-files")
        os.makedirs(cls.root, exist_ok=True)
        make_certificates(cls.root)
        for name, token in (("client", "s3cret-client"), ("cluster", "s3cret-cluster"),
                            ("wrong", "not-the-token")):
            with open(os.path.join(cls.root, name + ".token"), "w") as file:
                file.write(token + "\n")
        cls.cluster = LocalCluster(
            "secure", "--evaluator=false", f"--tls_cert={cls.root}/server.crt",
            f"--tls_key={cls.root}/server.key", f"--tls_ca={cls.root}/ca.crt",
            "--tls_client_auth=require", f"--client_token_file={cls.root}/client.token",
            f"--cluster_token_file={cls.root}/cluster.token")

    @classmethod
    def tearDownClass(cls):
        code = cls.cluster.stop()
        assert code == 0, f"pstrain local exited {code}:\n{cls.cluster.log()}"

    def client(self, token=None, certificate=True):
        files = {"tls_ca": f"{self.root}/ca.crt"}
        if certificate:
            files.update(tls_cert=f"{self.root}/client.crt", tls_key=f"{self.root}/client.key")
        if token:
            files["client_token_file"] = f"{self.root}/{token}.token"
        return pstrain.Client(self.cluster.address, timeout=10, **files)

    def test_the_right_token_over_tls_is_served(self):
        with self.client("client") as client:
            self.assertEqual(client.list(), [])
            self.assertEqual(len(client.members()), 2)

    def test_a_missing_or_wrong_token_is_refused(self):
        for token in (None, "wrong"):
            with self.client(token) as client, self.assertRaises(pstrain.AuthRefused) as caught:
                client.list()
            self.assertEqual(caught.exception.code, grpc.StatusCode.UNAUTHENTICATED)

    def test_the_token_may_come_from_the_environment(self):
        os.environ["PSTRAIN_TOKEN"] = "s3cret-client"
        try:
            with self.client() as client:
                self.assertEqual(client.list(), [])
        finally:
            del os.environ["PSTRAIN_TOKEN"]

    def test_an_unreadable_or_empty_token_file_is_refused_naming_it(self):
        missing = f"{self.root}/missing.token"
        with self.assertRaisesRegex(ValueError, f"client_token_file: cannot read {missing}"):
            pstrain.Client(self.cluster.address, client_token_file=missing)
        empty = f"{self.root}/empty.token"
        open(empty, "w").close()
        with self.assertRaisesRegex(ValueError, f"client_token_file: {empty} is empty"):
            pstrain.Client(self.cluster.address, client_token_file=empty)
        with self.assertRaisesRegex(ValueError, "tls_ca: cannot read"):
            pstrain.Client(self.cluster.address, tls_ca=f"{self.root}/missing.crt")

    def test_without_a_client_certificate_the_handshake_fails(self):
        with self.client("client", certificate=False) as client:
            with self.assertRaises(pstrain.Unreachable):
                client.list()


if __name__ == "__main__":
    unittest.main()
