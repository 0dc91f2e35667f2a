"""One fuzz target, built two ways.

pstrain_fuzzer(name = "foo_fuzzer", corpus = "foo", ...) makes:
  foo_fuzzer_lib   the harness (LLVMFuzzerTestOneInput) and what it calls;
  foo_fuzzer       a libFuzzer binary under --config=fuzz (clang), and a
                   replay binary (fuzz_replay_main.cc) otherwise;
  foo_fuzzer_test  the cc_test CI runs: replays corpus/foo, then mutates it
                   for `seconds` seconds.
"""

def pstrain_fuzzer(name, corpus, srcs, deps, seconds = 5, size = "small"):
    lib = name + "_lib"
    native.cc_library(
        name = lib,
        testonly = True,
        srcs = srcs,
        deps = deps + [":quiet_logs"],
        alwayslink = True,
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + lib] + select({
            ":libfuzzer": [],
            "//conditions:default": [":fuzz_replay_main"],
        }),
        # libFuzzer's main goes into the fuzz binaries only; everything else
        # is compiled with -fsanitize=fuzzer-no-link (see .bazelrc).
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    native.cc_test(
        name = name + "_test",
        size = size,
        args = [
            "--seconds=%d" % seconds,
            "tests/fuzz/corpus/" + corpus,
        ],
        data = native.glob(["corpus/" + corpus + "/*"]),
        deps = [
            ":" + lib,
            ":fuzz_replay_main",
        ],
    )
