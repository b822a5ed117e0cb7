// The "other client" of the browser test: the MoveValidator client generated from proto/,
// over gRPC-Web with Node's fetch, as a platform's server would call the arbiter. Bundled for
// Node by `npm test` (.build/test/client.mjs).

import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { MoveValidator } from "../src/gen/shogi/v1/arbiter_pb";

export function moveValidator(baseUrl: string) {
  return createClient(MoveValidator, createGrpcWebTransport({ baseUrl }));
}
