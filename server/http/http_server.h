#ifndef FANYI_SERVER_HTTP_HTTP_SERVER_H_
#define FANYI_SERVER_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fanyi {

// Settings of an HttpServer, validated by its constructor.
struct HttpServerOptions {
  std::string listen = "127.0.0.1:5000";  // HOST:PORT; port 0 picks one.
  int threads = 2;                        // Threads that run the connections.
  // Open connections, at most; a connection beyond them is closed at once,
  // so idle or slow clients cannot exhaust the server's sockets.
  int max_connections = 4096;
  // A request's head and body must arrive within this, counted from when
  // the server starts waiting for it (so a kept-alive connection that sends
  // nothing is closed after it too, and so is a client that sends one byte
  // a second). A response must be written within it as well.
  std::chrono::milliseconds request_timeout{10000};
  std::size_t max_header_bytes = 16 << 10;  // Larger heads get 431.
  std::size_t max_body_bytes = 1 << 20;     // Larger bodies get 413.
};

// One request, read whole.
struct HttpRequest {
  std::string method;        // "GET", "POST", ...
  std::string path;          // The target before '?', not decoded.
  std::string query;         // After '?', not decoded; may be empty.
  std::string content_type;  // The Content-Type header; may be empty.
  std::vector<std::pair<std::string, std::string>> headers;  // All of them.
  std::string body;
  std::string peer;  // The client's address, without the port.
  bool keep_alive = true;
  // Set by the server once the client has closed its connection while the
  // request is handled: nobody waits for the answer any more. Null for a
  // request made otherwise (tests).
  std::shared_ptr<const std::atomic<bool>> client_gone;

  // The value of header `name` (any letter case), or empty.
  std::string Header(const std::string& name) const;
  // Whether the client has gone (client_gone); thread-safe.
  bool ClientGone() const;
};

// One response.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Extra ones.
};

// Answers a request: call it exactly once, from any thread; the response is
// written on the connection's own thread.
using HttpResponder = std::function<void(HttpResponse)>;
// Handles every request the server reads; may answer later, from another
// thread (a translation answers from the assembly pool).
using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;
// Told the status of each request the server refuses itself (413, 431,
// 400), for the metrics.
using HttpRefusalObserver = std::function<void(int status)>;
// Told each time a client closes its connection while its request is
// handled (its work is then cancelled), for the metrics.
using HttpHangUpObserver = std::function<void()>;

// An HTTP/1.1 server (Boost.Beast on Asio): every connection is
// asynchronous, so idle and slow connections hold no thread, and requests
// are bounded in time and size (HttpServerOptions). Requests that cannot be
// read are answered here: 413 for a large body, 431 for a large head, 400
// for a malformed one; everything else goes to the handler. While the
// handler works, the connection is watched: a client that closes it is
// marked gone on its request (HttpRequest::client_gone). A client that
// half-closes its side after sending counts as gone too.
class HttpServer {
 public:
  // Binds `options.listen` and starts the threads. Throws
  // std::invalid_argument for bad options and std::runtime_error when the
  // address cannot be bound.
  HttpServer(const HttpServerOptions& options, HttpHandler handler,
             HttpRefusalObserver on_refused = nullptr,
             HttpHangUpObserver on_hang_up = nullptr);
  // Stops if that has not happened yet.
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;

  // Stops accepting, waits (at most `grace`) for the requests handed to
  // the handler to be answered and written, then closes every connection
  // and joins the threads. Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // The listener, connections and threads, in http_server_impl.h (public
  // so that HttpConnection can use it; nothing outside server/http can).
  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_HTTP_SERVER_H_
