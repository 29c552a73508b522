// Internal to server/http: what an HttpServer holds (the listener, the
// connections' count, the threads), shared by http_server.cc, which
// accepts and stops, and HttpConnection, which serves one connection.
#ifndef FANYI_SERVER_HTTP_HTTP_SERVER_IMPL_H_
#define FANYI_SERVER_HTTP_HTTP_SERVER_IMPL_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "server/http/http_server.h"

namespace fanyi {

// An HttpServer's listener, connections and threads.
class HttpServer::Impl {
 public:
  // Binds `server_options.listen`; throws std::invalid_argument for an
  // address that is not HOST:PORT and std::runtime_error when it cannot be
  // bound.
  Impl(const HttpServerOptions& server_options, HttpHandler request_handler,
       HttpRefusalObserver refusal_observer,
       HttpHangUpObserver hang_up_observer);

  // Accepts connections until Stop, each an HttpConnection.
  void Accept();
  // HttpServer::Stop.
  void Stop(std::chrono::milliseconds grace);

  // A request handed to the handler was answered and written (or its
  // connection failed).
  void RequestDone();

  // Declared before io: connections that io still holds at destruction
  // use them.
  const HttpServerOptions options;
  const HttpHandler handler;
  const HttpRefusalObserver on_refused;  // May be empty.
  const HttpHangUpObserver on_hang_up;   // May be empty.
  std::atomic<int> connections{0};
  std::mutex mutex;
  std::condition_variable answered;  // in_flight reached 0.
  int in_flight = 0;                 // Guarded by mutex.
  std::once_flag stop_once;

  boost::asio::io_context io;
  // Keeps the threads running while requests are with the handler and no
  // connection waits for anything.
  std::optional<
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      work;
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer accept_retry;
  std::vector<std::thread> threads;
  int port = 0;  // Bound.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_HTTP_SERVER_IMPL_H_
