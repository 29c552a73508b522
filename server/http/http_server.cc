#include "server/http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

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

bool EqualsIgnoringCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

HttpResponse TransportErrorResponse(int status, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

// "HOST:PORT" (HOST may be [v6]) as an endpoint.
tcp::endpoint ParseEndpoint(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    throw std::invalid_argument("HTTP address '" + listen +
                                "' is not HOST:PORT");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    throw std::invalid_argument("HTTP address '" + listen +
                                "' has no valid port");
  }
  beast::error_code error;
  const asio::ip::address address = asio::ip::make_address(host, error);
  if (error) {
    throw std::invalid_argument("HTTP address '" + listen + "': '" + host +
                                "' is not an IP address");
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

}  // namespace

std::string HttpRequest::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoringCase(key, name)) return value;
  }
  return "";
}

bool HttpRequest::ClientGone() const {
  return client_gone != nullptr && client_gone->load();
}

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& server_options, HttpHandler request_handler,
       HttpRefusalObserver refusal_observer,
       HttpHangUpObserver hang_up_observer);

  void Accept();
  void Stop(std::chrono::milliseconds grace);

  // A request handed to the handler was answered and written (or its
  // connection failed).
  void RequestDone() {
    std::lock_guard<std::mutex> lock(mutex);
    if (--in_flight == 0) answered.notify_all();
  }

  // Declared before io: sessions that io still holds at destruction use
  // them.
  const HttpServerOptions options;
  const HttpHandler handler;
  const HttpRefusalObserver on_refused;  // May be empty.
  const HttpHangUpObserver on_hang_up;   // May be empty.
  std::atomic<int> connections{0};
  std::mutex mutex;
  std::condition_variable answered;  // in_flight reached 0.
  int in_flight = 0;                 // Guarded by mutex.
  std::once_flag stop_once;

  asio::io_context io;
  // Keeps the threads running while requests are with the handler and no
  // connection waits for anything.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work;
  tcp::acceptor acceptor;
  asio::steady_timer accept_retry;
  std::vector<std::thread> threads;
  int port = 0;  // Bound.
};

namespace {

// One connection: reads a request (bounded in time and size), hands it to
// the handler, writes the answer, and reads the next one while the client
// keeps the connection alive. Runs on its own strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl& server)
      : stream_(std::move(socket)), server_(server) {
    beast::error_code error;
    const tcp::endpoint peer = stream_.socket().remote_endpoint(error);
    if (!error) peer_ = peer.address().to_string();
  }
  ~Session() { --server_.connections; }

  void Start() {
    asio::dispatch(
        stream_.get_executor(),
        beast::bind_front_handler(&Session::Read, shared_from_this()));
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(server_.options.request_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  // The head is in (or reading it failed): a client that waits for
  // "100 Continue" before sending its body (curl does, for large bodies)
  // gets it, unless the body is too large anyway; then the body is read
  // within the same deadline.
  void OnHeader(beast::error_code error, std::size_t bytes) {
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

  void ReadBody() {
    http::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code error, std::size_t /*bytes*/) {
    if (error == http::error::body_limit) {
      return Reply(TransportErrorResponse(
                       413, "the request body is larger than the limit of " +
                                std::to_string(server_.options.max_body_bytes) +
                                " bytes"),
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
    HttpResponder respond = [self, answered,
                             keep_alive](HttpResponse response) {
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
      respond(TransportErrorResponse(
          500, std::string("internal error: ") + e.what()));
    }
  }

  // While the handler works, waits for the socket to be readable: a client
  // that closed its connection makes it readable with nothing to read, and
  // `gone` is set, so that work nobody waits for is cancelled. Bytes to
  // read are the client's next request (pipelined): they stay for Read,
  // and the watch ends. Reply cancels it.
  void WatchForHangUp(std::shared_ptr<std::atomic<bool>> gone) {
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
          if (peeked == 0 ||
              (peeked < 0 &&
               (error || (errno != EAGAIN && errno != EWOULDBLOCK)))) {
            gone->store(true);
            if (self->server_.on_hang_up) self->server_.on_hang_up();
          }
        });
  }

  // Writes `response`; then reads the next request, or closes. `counted`:
  // the response answers a request handed to the handler.
  void Reply(HttpResponse response, bool keep_alive, bool counted) {
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

  // Sends FIN, then reads and drops what the client still sends for a
  // moment before closing, so that it reads the response instead of a
  // reset.
  void LingeringClose() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(
        asio::buffer(scratch_),
        [self = shared_from_this()](beast::error_code error, std::size_t) {
          if (error) return self->Close();
          self->Drain();
        });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::array<char, 4096> scratch_;
  bool watching_ = false;  // A WatchForHangUp wait is outstanding.
};

}  // namespace

HttpServer::Impl::Impl(const HttpServerOptions& server_options,
                       HttpHandler request_handler,
                       HttpRefusalObserver refusal_observer,
                       HttpHangUpObserver hang_up_observer)
    : options(server_options),
      handler(std::move(request_handler)),
      on_refused(std::move(refusal_observer)),
      on_hang_up(std::move(hang_up_observer)),
      work(io.get_executor()),
      acceptor(io),
      accept_retry(io) {
  const tcp::endpoint endpoint = ParseEndpoint(options.listen);
  beast::error_code error;
  acceptor.open(endpoint.protocol(), error);
  if (!error)
    acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    throw std::runtime_error("cannot listen for HTTP on " + options.listen +
                             ": " + error.message());
  }
  port = acceptor.local_endpoint().port();
}

void HttpServer::Impl::Accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code error,
                                                      tcp::socket socket) {
    if (error == asio::error::operation_aborted) return;  // Stopping.
    if (error) {
      // Out of descriptors, say: try again shortly instead of spinning.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](beast::error_code wait_error) {
        if (!wait_error) Accept();
      });
      return;
    }
    if (connections.load() >= options.max_connections) {
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      ++connections;
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(std::move(socket), *this)->Start();
    }
    Accept();
  });
}

void HttpServer::Impl::Stop(std::chrono::milliseconds grace) {
  std::call_once(stop_once, [&] {
    asio::post(io, [this] {
      beast::error_code ignored;
      acceptor.close(ignored);
      accept_retry.cancel();
    });
    {
      std::unique_lock<std::mutex> lock(mutex);
      answered.wait_for(lock, grace, [this] { return in_flight == 0; });
    }
    work.reset();
    io.stop();
    for (std::thread& thread : threads) thread.join();
  });
}

HttpServer::HttpServer(const HttpServerOptions& options, HttpHandler handler,
                       HttpRefusalObserver on_refused,
                       HttpHangUpObserver on_hang_up) {
  if (options.threads < 1) {
    throw std::invalid_argument("HTTP threads must be at least 1");
  }
  if (options.max_connections < 1) {
    throw std::invalid_argument("HTTP connections must be at least 1");
  }
  if (options.request_timeout.count() <= 0) {
    throw std::invalid_argument("the HTTP request timeout must be positive");
  }
  impl_ = std::make_unique<Impl>(options, std::move(handler),
                                 std::move(on_refused), std::move(on_hang_up));
  impl_->Accept();
  for (int i = 0; i < options.threads; ++i) {
    impl_->threads.emplace_back([this] { impl_->io.run(); });
  }
}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::port() const { return impl_->port; }

void HttpServer::Stop(std::chrono::milliseconds grace) { impl_->Stop(grace); }

}  // namespace fanyi
