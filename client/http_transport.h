#ifndef FANYI_CLIENT_HTTP_TRANSPORT_H_
#define FANYI_CLIENT_HTTP_TRANSPORT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace fanyi {

// A client of a server's POST /translate over HTTP/1.1, for the load
// generator: a thread running asynchronous Beast connections, each kept
// alive and reused by the next request; a request takes an idle connection
// or opens one, so there are as many as requests in flight.
class HttpTransport {
 public:
  // Resolves `server` (host:port) and connects once, so that an unreachable
  // server fails before anything is measured; throws std::runtime_error
  // then.
  HttpTransport(const std::string& server, std::chrono::milliseconds timeout);
  // Drops the idle connections and joins the thread; the requests in flight
  // must have completed.
  ~HttpTransport();

  // Sends `body` to POST /translate; `done` gets the HTTP status (0 when
  // the exchange failed) and the answer's body, on the transport's thread.
  void Send(std::string body,
            std::function<void(int status, std::string body)> done);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fanyi

#endif  // FANYI_CLIENT_HTTP_TRANSPORT_H_
