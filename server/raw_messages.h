// The wire side of the Translate RPCs, read and written by the service
// itself: their text fields are proto `string`, which the protobuf parser
// refuses outright when they hold invalid UTF-8 (gRPC would answer
// INTERNAL, "failed to parse"); reading the bytes here lets the service say
// INVALID_ARGUMENT and name the field, as it does for every other bad text.
#ifndef FANYI_SERVER_RAW_MESSAGES_H_
#define FANYI_SERVER_RAW_MESSAGES_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"

namespace fanyi {

// Parses `buffer` into `message`. INVALID_ARGUMENT when it is not such a
// message: naming the string field that holds invalid UTF-8 and where
// ("texts[1]: invalid UTF-8 at byte 3", "glossary[0].target: ..."), or
// saying that the bytes are not the message at all.
grpc::Status ReadMessage(const grpc::ByteBuffer& buffer,
                         google::protobuf::Message* message);

// Serializes `message` into `buffer`; INTERNAL if it cannot.
grpc::Status WriteMessage(const google::protobuf::Message& message,
                          grpc::ByteBuffer* buffer);

// The first string field of `wire` (a serialized `descriptor` message,
// nested messages included) that is not valid UTF-8, as ReadMessage names
// it with the byte; empty when every string field is UTF-8 or `wire` does
// not parse.
std::string InvalidUtf8Field(const google::protobuf::Descriptor& descriptor,
                             std::string_view wire);

}  // namespace fanyi

#endif  // FANYI_SERVER_RAW_MESSAGES_H_
