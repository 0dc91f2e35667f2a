"""pstrain_proto_library: C++ and gRPC code from a .proto, using the system protoc.

Bazel's own proto rules download their toolchain, so each .proto is compiled
by a genrule over Debian's /usr/bin/protoc and /usr/bin/grpc_cpp_plugin.

For `protos/foo.proto`, `pstrain_proto_library(name = "foo_proto", src = "foo.proto")`
declares:
  :foo_proto       cc_library with foo.pb.h and foo.grpc.pb.h
  :foo_proto_mock  testonly cc_library with foo_mock.grpc.pb.h (gmock stubs)
  :foo_proto_srcs  the .proto and everything it imports, for dependants
"""

_PROTOC = "/usr/bin/protoc"
_GRPC_PLUGIN = "/usr/bin/grpc_cpp_plugin"

def pstrain_proto_library(name, src, deps = [], visibility = None):
    if not src.endswith(".proto"):
        fail("src must be a .proto file, got " + src)
    stem = src[:-len(".proto")]
    pb = [stem + ".pb.h", stem + ".pb.cc"]
    grpc = [stem + ".grpc.pb.h", stem + ".grpc.pb.cc"]
    mock = [stem + "_mock.grpc.pb.h"]

    native.filegroup(
        name = name + "_srcs",
        srcs = [src] + [d + "_srcs" for d in deps],
        visibility = visibility,
    )

    native.genrule(
        name = name + "_gen",
        srcs = [src, name + "_srcs"],
        outs = pb + grpc + mock,
        cmd = " ".join([
            _PROTOC,
            "-I.",
            "--cpp_out=$(GENDIR)",
            "--grpc_out=generate_mock_code=true:$(GENDIR)",
            "--plugin=protoc-gen-grpc=" + _GRPC_PLUGIN,
            "$(location " + src + ")",
        ]),
        message = "protoc " + native.package_name() + "/" + src,
    )

    native.cc_library(
        name = name,
        srcs = [pb[1], grpc[1]],
        hdrs = [pb[0], grpc[0]],
        deps = deps + [
            "//third_party:grpc",
            "//third_party:protobuf",
        ],
        visibility = visibility,
    )

    native.cc_library(
        name = name + "_mock",
        testonly = True,
        hdrs = mock,
        deps = [
            ":" + name,
            "//third_party:gtest",
        ],
        visibility = visibility,
    )
