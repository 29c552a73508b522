#ifndef FANYI_SERVER_HTTP_HTTP_CONNECTION_H_
#define FANYI_SERVER_HTTP_HTTP_CONNECTION_H_

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "server/http/http_server.h"

namespace fanyi {

// One connection: reads a request (bounded in time and size), hands it to
// the handler, writes the answer, and reads the next one while the client
// keeps the connection alive. Runs on its own strand.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  // Counted in `server`'s connections until destroyed.
  HttpConnection(boost::asio::ip::tcp::socket socket, HttpServer::Impl& server);
  ~HttpConnection();

  // Reads the first request, on the connection's strand.
  void Start();

 private:
  void Read();
  // The head is in (or reading it failed): a client that waits for
  // "100 Continue" before sending its body (curl does, for large bodies)
  // gets it, unless the body is too large anyway; then the body is read
  // within the same deadline.
  void OnHeader(boost::beast::error_code error, std::size_t bytes);
  void ReadBody();
  void OnRead(boost::beast::error_code error, std::size_t bytes);
  // While the handler works, waits for the socket to be readable: a client
  // that closed its connection makes it readable with nothing to read, and
  // `gone` is set, so that work nobody waits for is cancelled. Bytes to
  // read are the client's next request (pipelined): they stay for Read,
  // and the watch ends. Reply cancels it.
  void WatchForHangUp(std::shared_ptr<std::atomic<bool>> gone);
  // Writes `response`; then reads the next request, or closes. `counted`:
  // the response answers a request handed to the handler.
  void Reply(HttpResponse response, bool keep_alive, bool counted);
  // Sends FIN, then reads and drops what the client still sends for a
  // moment before closing, so that it reads the response instead of a
  // reset.
  void LingeringClose();
  void Drain();
  void Close();

  boost::beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  std::string peer_;
  boost::beast::flat_buffer buffer_;
  std::optional<
      boost::beast::http::request_parser<boost::beast::http::string_body>>
      parser_;
  std::array<char, 4096> scratch_;
  bool watching_ = false;  // A WatchForHangUp wait is outstanding.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_HTTP_CONNECTION_H_
