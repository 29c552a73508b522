#include "client/http_transport.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace fanyi {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct HttpTransport::Impl {
  struct Connection {
    explicit Connection(asio::io_context& io) : stream(io) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::response<http::string_body> response;
  };

  explicit Impl(std::chrono::milliseconds timeout)
      : timeout(timeout), work(io.get_executor()) {}

  void Exchange(std::shared_ptr<Connection> connection, std::string body,
                std::function<void(int, std::string)> done) {
    Connection& c = *connection;
    c.request = {http::verb::post, "/translate", 11};
    c.request.set(http::field::host, host);
    c.request.set(http::field::content_type, "application/json");
    c.request.body() = std::move(body);
    c.request.prepare_payload();
    c.response = {};
    c.stream.expires_after(timeout);
    http::async_write(c.stream, c.request,
                      [this, connection, done = std::move(done)](
                          beast::error_code error, std::size_t) mutable {
                        if (error) return done(0, error.message());
                        Connection& c = *connection;
                        http::async_read(
                            c.stream, c.buffer, c.response,
                            [this, connection, done = std::move(done)](
                                beast::error_code error, std::size_t) {
                              if (error) return done(0, error.message());
                              const bool keep =
                                  connection->response.keep_alive();
                              done(connection->response.result_int(),
                                   std::move(connection->response.body()));
                              if (keep) idle.push_back(connection);
                            });
                      });
  }

  const std::chrono::milliseconds timeout;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  asio::ip::tcp::resolver::results_type endpoints;
  std::string host;
  // Touched on the transport's thread only.
  std::vector<std::shared_ptr<Connection>> idle;
  std::thread thread;
};

HttpTransport::HttpTransport(const std::string& server,
                             std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(timeout)) {
  const std::size_t colon = server.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error("http server " + server + " is not host:port");
  }
  asio::ip::tcp::resolver resolver(impl_->io);
  impl_->endpoints =
      resolver.resolve(server.substr(0, colon), server.substr(colon + 1));
  impl_->host = server;
  // Reachable before anything is measured.
  beast::tcp_stream probe(impl_->io);
  probe.expires_after(timeout);
  beast::error_code error;
  probe.socket().connect(*impl_->endpoints.begin(), error);
  if (error) {
    throw std::runtime_error("cannot connect to " + server + ": " +
                             error.message());
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

HttpTransport::~HttpTransport() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->idle.clear(); });
  impl_->work.reset();
  impl_->thread.join();
}

void HttpTransport::Send(
    std::string body, std::function<void(int status, std::string body)> done) {
  Impl* impl = impl_.get();
  asio::post(impl->io, [impl, body = std::move(body),
                        done = std::move(done)]() mutable {
    std::shared_ptr<Impl::Connection> connection;
    if (!impl->idle.empty()) {
      connection = std::move(impl->idle.back());
      impl->idle.pop_back();
    } else {
      connection = std::make_shared<Impl::Connection>(impl->io);
      connection->stream.expires_after(impl->timeout);
      beast::error_code error;
      connection->stream.socket().connect(*impl->endpoints.begin(), error);
      if (error) return done(0, error.message());
    }
    impl->Exchange(std::move(connection), std::move(body), std::move(done));
  });
}

}  // namespace fanyi
