#include "server/http/http_connection.h"

#include <sys/socket.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "server/http/http_server_impl.h"

namespace fanyi {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// How long a connection that is being closed after an error response may
// go on sending what it had started (a body too large, say), read and
// dropped, so that the client reads the response instead of a reset.
constexpr std::chrono::seconds kLingerTime{2};

HttpResponse TransportErrorResponse(int status, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

}  // namespace

HttpConnection::HttpConnection(tcp::socket socket, HttpServer::Impl& server)
    : stream_(std::move(socket)), server_(server) {
  beast::error_code error;
  const tcp::endpoint peer = stream_.socket().remote_endpoint(error);
  if (!error) peer_ = peer.address().to_string();
}

HttpConnection::~HttpConnection() { --server_.connections; }

void HttpConnection::Start() {
  asio::dispatch(
      stream_.get_executor(),
      beast::bind_front_handler(&HttpConnection::Read, shared_from_this()));
}

void HttpConnection::Read() {
  parser_.emplace();
  parser_->header_limit(
      static_cast<std::uint32_t>(server_.options.max_header_bytes));
  parser_->body_limit(server_.options.max_body_bytes);
  stream_.expires_after(server_.options.request_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      beast::bind_front_handler(&HttpConnection::OnHeader, shared_from_this()));
}

void HttpConnection::OnHeader(beast::error_code error, std::size_t bytes) {
  if (error) return OnRead(error, bytes);
  const auto expect = parser_->get().find(http::field::expect);
  const bool wants_continue =
      expect != parser_->get().end() &&
      beast::iequals(expect->value(), "100-continue") &&
      !(parser_->content_length() &&
        *parser_->content_length() > server_.options.max_body_bytes);
  if (!wants_continue) return ReadBody();
  auto continue_message = std::make_shared<http::response<http::empty_body>>(
      http::status::continue_, 11);
  http::async_write(stream_, *continue_message,
                    [self = shared_from_this(), continue_message](
                        beast::error_code write_error, std::size_t) {
                      if (write_error) return self->Close();
                      self->ReadBody();
                    });
}

void HttpConnection::ReadBody() {
  http::async_read(
      stream_, buffer_, *parser_,
      beast::bind_front_handler(&HttpConnection::OnRead, shared_from_this()));
}

void HttpConnection::OnRead(beast::error_code error, std::size_t /*bytes*/) {
  if (error == http::error::body_limit) {
    return Reply(
        TransportErrorResponse(
            413, "the request body is larger than the limit of " +
                     std::to_string(server_.options.max_body_bytes) + " bytes"),
        /*keep_alive=*/false, /*counted=*/false);
  }
  if (error == http::error::header_limit) {
    return Reply(
        TransportErrorResponse(
            431,
            "the request head is larger than the "
            "limit of " +
                std::to_string(server_.options.max_header_bytes) + " bytes"),
        false, false);
  }
  if (error) {
    // A request the parser refused gets 400; a client that left, was too
    // slow or whose socket failed has nobody left to answer.
    const bool malformed =
        error.category() ==
            http::make_error_code(http::error::bad_method).category() &&
        error != http::error::end_of_stream &&
        error != http::error::partial_message;
    if (!malformed) return Close();
    return Reply(TransportErrorResponse(
                     400, "malformed HTTP request: " + error.message()),
                 false, false);
  }
  const http::request<http::string_body>& message = parser_->get();
  HttpRequest request;
  request.method = std::string(message.method_string());
  const std::string target(message.target());
  const std::size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) {
    request.query = target.substr(question + 1);
  }
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()),
                                 std::string(field.value()));
  }
  request.content_type = request.Header("Content-Type");
  request.peer = peer_;
  request.keep_alive = message.keep_alive();
  request.body = parser_->release().body();  // `message` is gone now.
  const bool keep_alive = request.keep_alive;
  auto client_gone = std::make_shared<std::atomic<bool>>(false);
  request.client_gone = client_gone;

  stream_.expires_never();  // The handler's own deadline applies.
  {
    std::lock_guard<std::mutex> lock(server_.mutex);
    ++server_.in_flight;
  }
  auto self = shared_from_this();
  auto answered = std::make_shared<std::atomic<bool>>(false);
  HttpResponder respond = [self, answered, keep_alive](HttpResponse response) {
    if (answered->exchange(true)) return;
    asio::post(self->stream_.get_executor(),
               [self, keep_alive, response = std::move(response)]() mutable {
                 self->Reply(std::move(response), keep_alive,
                             /*counted=*/true);
               });
  };
  WatchForHangUp(std::move(client_gone));
  try {
    server_.handler(std::move(request), respond);
  } catch (const std::exception& e) {
    respond(TransportErrorResponse(500,
                                   std::string("internal error: ") + e.what()));
  }
}

void HttpConnection::WatchForHangUp(std::shared_ptr<std::atomic<bool>> gone) {
  watching_ = true;
  stream_.socket().async_wait(
      tcp::socket::wait_read,
      [self = shared_from_this(), gone](beast::error_code error) {
        // Cancelled by Reply.
        if (error == asio::error::operation_aborted || !self->watching_) {
          return;
        }
        self->watching_ = false;
        // A failed wait is a failed socket: the client is gone too.
        char byte;
        const ssize_t peeked =
            error ? -1
                  : recv(self->stream_.socket().native_handle(), &byte, 1,
                         MSG_PEEK | MSG_DONTWAIT);
        if (peeked == 0 || (peeked < 0 && (error || (errno != EAGAIN &&
                                                     errno != EWOULDBLOCK)))) {
          gone->store(true);
          if (self->server_.on_hang_up) self->server_.on_hang_up();
        }
      });
}

void HttpConnection::Reply(HttpResponse response, bool keep_alive,
                           bool counted) {
  if (watching_) {
    // Ends WatchForHangUp's wait; nothing else is outstanding on the
    // socket while a request is handled.
    watching_ = false;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }
  if (!counted && server_.on_refused) server_.on_refused(response.status);
  auto message = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(response.status), 11);
  message->set(http::field::server, "fanyi");
  message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) {
    message->set(name, value);
  }
  message->body() = std::move(response.body);
  message->keep_alive(keep_alive);
  message->prepare_payload();
  stream_.expires_after(server_.options.request_timeout);
  http::async_write(stream_, *message,
                    [self = shared_from_this(), message, counted](
                        beast::error_code error, std::size_t) {
                      if (counted) self->server_.RequestDone();
                      if (error) return self->Close();
                      if (message->keep_alive()) return self->Read();
                      self->LingeringClose();
                    });
}

void HttpConnection::LingeringClose() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kLingerTime);
  Drain();
}

void HttpConnection::Drain() {
  stream_.async_read_some(
      asio::buffer(scratch_),
      [self = shared_from_this()](beast::error_code error, std::size_t) {
        if (error) return self->Close();
        self->Drain();
      });
}

void HttpConnection::Close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace fanyi
