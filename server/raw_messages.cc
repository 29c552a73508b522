#include "server/raw_messages.h"

#include <google/protobuf/unknown_field_set.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "common/text/utf8.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace fanyi {
namespace {

// `wire`'s string fields checked in order, each named after `prefix`.
std::string FindInvalidUtf8(const google::protobuf::Descriptor& descriptor,
                            std::string_view wire, const std::string& prefix) {
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromArray(wire.data(), static_cast<int>(wire.size()))) {
    return "";
  }
  std::map<int, int> seen;  // Occurrences of each field number so far.
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    const int index = seen[field.number()]++;
    const google::protobuf::FieldDescriptor* known =
        descriptor.FindFieldByNumber(field.number());
    if (known == nullptr ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    const std::string name =
        prefix + known->name() +
        (known->is_repeated() ? "[" + std::to_string(index) + "]" : "");
    if (known->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
      try {
        DecodeUtf8(field.length_delimited());
      } catch (const std::invalid_argument& e) {
        return name + ": " + e.what();
      }
    } else if (known->type() ==
               google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      const std::string found = FindInvalidUtf8(
          *known->message_type(), field.length_delimited(), name + ".");
      if (!found.empty()) return found;
    }
  }
  return "";
}

}  // namespace

std::string InvalidUtf8Field(const google::protobuf::Descriptor& descriptor,
                             std::string_view wire) {
  return FindInvalidUtf8(descriptor, wire, "");
}

grpc::Status ReadMessage(const grpc::ByteBuffer& buffer,
                         google::protobuf::Message* message) {
  {
    grpc::ByteBuffer copy(buffer);  // The reader consumes what it reads.
    grpc::ProtoBufferReader reader(&copy);
    if (message->ParseFromZeroCopyStream(&reader)) return grpc::Status::OK;
  }
  std::vector<grpc::Slice> slices;
  std::string wire;
  if (buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      wire.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  const std::string invalid = InvalidUtf8Field(*message->GetDescriptor(), wire);
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      !invalid.empty()
                          ? invalid
                          : "the request is not a " +
                                message->GetDescriptor()->full_name() +
                                " message");
}

grpc::Status WriteMessage(const google::protobuf::Message& message,
                          grpc::ByteBuffer* buffer) {
  bool own_buffer = false;
  return grpc::SerializationTraits<google::protobuf::Message>::Serialize(
      message, buffer, &own_buffer);
}

}  // namespace fanyi
