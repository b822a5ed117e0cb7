"""What a generic client does with no generated code: learn the contract by server reflection.

grpcio-reflection's client speaks only `grpc.reflection.v1alpha`, like older grpcurl releases
and GUI clients, so this checks that the arbiter answers it: it lists the services, resolves
`shogi.v1.MoveValidator` and the bus's messages (`bus.proto`), and calls ValidateMove with
messages built from the reflected descriptors alone. Exits 1 on any wrong answer.

    .venv/bin/python reflection_check.py --addr 127.0.0.1:50051
"""

import argparse
import sys

import grpc
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

RPCS = (
    "CreateGame",
    "SubmitMove",
    "ValidateMove",
    "Declare",
    "EvaluateImpasse",
    "GetGame",
    "WatchGame",
    "EndGame",
)
START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"


def check(what, got, want):
    if got != want:
        print(f"WRONG ANSWER: {what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)
    print(f"ok  {what}: {got!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:50051")
    args = parser.parse_args()
    with grpc.insecure_channel(args.addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=20)
        database = ProtoReflectionDescriptorDatabase(channel)
        services = set(database.get_services())
        for name in (
            "shogi.v1.MoveValidator",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        ):
            check(f"service {name} listed", name in services, True)

        pool = DescriptorPool(database)
        service = pool.FindServiceByName("shogi.v1.MoveValidator")
        check("MoveValidator's file", service.file.name, "shogi/v1/arbiter.proto")
        methods = {m.name for m in service.methods}
        for name in RPCS:
            check(f"MoveValidator.{name} reflected", name in methods, True)
        lease = pool.FindMessageTypeByName("shogi.v1.PartitionLease")
        check("PartitionLease's file", lease.file.name, "shogi/v1/bus.proto")

        # A call with messages built from the reflected descriptors only.
        method = service.methods_by_name["ValidateMove"]
        request_class = GetMessageClass(method.input_type)
        response_class = GetMessageClass(method.output_type)
        validate = channel.unary_unary(
            "/shogi.v1.MoveValidator/ValidateMove",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        answer = validate(request_class(sfen=START, usi="7g7f"), timeout=10)
        check("ValidateMove 7g7f from the start: legal", answer.legal, True)
        answer = validate(request_class(sfen=START, usi="7g7e"), timeout=10)
        check("ValidateMove 7g7e from the start: legal", answer.legal, False)
        check("ValidateMove 7g7e: kind", answer.illegal_kind_name, "impossible")
    print("reflection (v1alpha): the whole contract, from the server alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
