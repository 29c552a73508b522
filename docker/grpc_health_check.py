#!/usr/bin/env python3
"""Asks a gRPC server's standard health service (grpc.health.v1.Health/Check)
whether it is SERVING; exits 0 if so, 1 otherwise. The image's HEALTHCHECK.

grpc_health_probe and grpcurl are not Debian packages, and fanyi-client would
send a real translation that queues behind traffic (a loaded server would look
unhealthy). Debian's python3-grpcio speaks the health protocol directly; the
two messages are encoded by hand so that no generated stubs are needed:
HealthCheckRequest{service: ""} is empty, HealthCheckResponse{status: SERVING}
is field 1 = 1.

Usage: grpc_health_check.py [HOST:PORT] [TIMEOUT_SECONDS]
"""
import sys

import grpc

SERVING_RESPONSE = b"\x08\x01"  # HealthCheckResponse{status: SERVING}


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"
    timeout_seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    with grpc.insecure_channel(address) as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda message: message,
            response_deserializer=lambda message: message,
        )
        try:
            response = check(b"", timeout=timeout_seconds)
        except grpc.RpcError as error:
            print(f"{address}: {error.code().name}: {error.details()}")
            return 1
    if response != SERVING_RESPONSE:
        print(f"{address}: not SERVING (response {response!r})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
