#include "server/http/http_server.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "server/http/http_connection.h"
#include "server/http/http_server_impl.h"

namespace fanyi {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

bool EqualsIgnoringCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
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
      std::make_shared<HttpConnection>(std::move(socket), *this)->Start();
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

void HttpServer::Impl::RequestDone() {
  std::lock_guard<std::mutex> lock(mutex);
  if (--in_flight == 0) answered.notify_all();
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
