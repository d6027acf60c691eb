// The HTTPS transport against a TLS server of our own on 127.0.0.1:0 (certificates generated per run): how
// a chunked watch stream is cut into lines, the limits, the deadlines, certificate and name checks, the
// token file, and stopping a call in flight.
#include <catch2/catch.hpp>

#include <poll.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/proxy.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/tls_context.hpp"

namespace gpuadmit::test {
namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

struct Pki {
  server::PemPair ca;
  server::PemPair serving;  // SAN: DNS localhost, IP 127.0.0.1
  server::PemPair other_ca;
};

const Pki& pki() {
  static const Pki p = [] {
    auto ca = server::generate_ca({"cluster-test-ca", 1});
    auto other = server::generate_ca({"some-other-ca", 1});
    REQUIRE(ca.ok());
    REQUIRE(other.ok());
    auto serving = server::generate_serving_certificate(*ca, {{"localhost"}, {"127.0.0.1"}, 1, {}});
    REQUIRE(serving.ok());
    return Pki{*ca, *serving, *other};
  }();
  return p;
}

// One TLS connection as the test server sees it.
class Peer {
 public:
  explicit Peer(ssl::stream<tcp::socket>& stream) : stream_(stream) {}
  void write(std::string_view bytes) {
    boost::system::error_code ec;
    net::write(stream_, net::buffer(bytes.data(), bytes.size()), ec);
  }
  void chunk(std::string_view data) {
    std::ostringstream size;
    size << std::hex << data.size();
    write(size.str() + "\r\n" + std::string(data) + "\r\n");
  }
  void start_chunked(int status = 200) {
    write("HTTP/1.1 " + std::to_string(status) +
          " OK\r\nContent-Type: application/json\r\n"
          "Transfer-Encoding: chunked\r\n\r\n");
  }
  void end_chunked() { write("0\r\n\r\n"); }
  void respond(int status, const std::string& body) {
    write("HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  }
  // Blocks until the client closes the connection.
  void wait_for_close() {
    std::array<char, 256> sink{};
    boost::system::error_code ec;
    while (!ec) stream_.read_some(net::buffer(sink), ec);
  }

 private:
  ssl::stream<tcp::socket>& stream_;
};

using Handler = std::function<void(const http::request<http::string_body>&, Peer&)>;

// A listening socket on 127.0.0.1 (a free port) whose blocking accept a test server's thread runs.
struct LoopbackAcceptor {
  LoopbackAcceptor() {
    acceptor.open(tcp::v4());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor.listen();
    port = acceptor.local_endpoint().port();
  }
  // Connects once, so that the blocking accept returns and the server's thread sees it is stopping.
  void wake() {
    boost::system::error_code ec;
    tcp::socket poke(ioc);
    poke.connect({net::ip::make_address("127.0.0.1"), port}, ec);
  }
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::uint16_t port = 0;
};

// Serves connections one at a time on 127.0.0.1:0 with the given certificate, calling `handler` per request.
class TlsServer {
 public:
  explicit TlsServer(Handler handler, bool handshake = true)
      : handler_(std::move(handler)), handshake_(handshake) {
    auto context = server::make_server_context(pki().serving.certificate, pki().serving.private_key);
    REQUIRE(context.ok());
    context_ = *context;
    // Asks for a client certificate and takes any: the tests check which one came, not its chain.
    SSL_CTX_set_verify(context_->native_handle(), SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
    thread_ = std::thread([this] { serve(); });
  }
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;
  ~TlsServer() {
    stopping_ = true;
    listener_.wake();
    thread_.join();
  }

  [[nodiscard]] std::uint16_t port() const { return listener_.port; }
  [[nodiscard]] std::vector<std::string> authorizations() const {
    const std::lock_guard lock(mutex_);
    return authorizations_;
  }
  [[nodiscard]] std::vector<std::string> targets() const {
    const std::lock_guard lock(mutex_);
    return targets_;
  }
  // Per request, the common name of the client certificate presented ("" for none).
  [[nodiscard]] std::vector<std::string> clients() const {
    const std::lock_guard lock(mutex_);
    return clients_;
  }

 private:
  void serve() {
    while (true) {
      tcp::socket socket(listener_.ioc);
      boost::system::error_code ec;
      listener_.acceptor.accept(socket, ec);
      if (stopping_ || ec) return;
      ssl::stream<tcp::socket> stream(std::move(socket), *context_);
      if (!handshake_) {
        Peer(stream).wait_for_close();
        continue;
      }
      stream.handshake(ssl::stream_base::server, ec);
      if (ec) continue;  // the client refused us, as some tests want
      boost::beast::flat_buffer buffer;
      http::request<http::string_body> request;
      http::read(stream, buffer, request, ec);
      if (ec) continue;
      {
        const std::lock_guard lock(mutex_);
        authorizations_.emplace_back(request[http::field::authorization]);
        targets_.emplace_back(request.target());
        clients_.push_back(client_name(stream));
      }
      Peer peer(stream);
      handler_(request, peer);
      stream.lowest_layer().close(ec);
    }
  }

  static std::string client_name(ssl::stream<tcp::socket>& stream) {
    X509* peer = SSL_get1_peer_certificate(stream.native_handle());
    if (peer == nullptr) return "";
    std::array<char, 256> cn{};
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn.data(), cn.size());
    X509_free(peer);
    return cn.data();
  }

  Handler handler_;
  bool handshake_;
  LoopbackAcceptor listener_;
  std::shared_ptr<ssl::context> context_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> authorizations_;
  std::vector<std::string> targets_;
  std::vector<std::string> clients_;
  std::thread thread_;  // last: started once everything it uses exists
};

cluster::ApiConfig config_for(const TlsServer& server, std::string host = "127.0.0.1") {
  cluster::ApiConfig config;
  config.host = std::move(host);
  config.port = server.port();
  config.ca_pem = pki().ca.certificate;
  config.token = "secret";
  config.source = "test";
  return config;
}

// A proxy that tunnels with HTTP CONNECT, as squid or a corporate egress proxy does, or with SOCKS5's (RFC
// 1928, user and password by RFC 1929), as `ssh -D` does: it checks the credentials it is given against
// user:password, connects to the target and relays bytes both ways. It sees only the TLS records inside.
class ConnectProxy {
 public:
  // `basic`: the Proxy-Authorization an HTTP client sends for user:password.
  ConnectProxy(std::string user, std::string password, std::string basic)
      : user_(std::move(user)), password_(std::move(password)), wanted_(std::move(basic)) {
    thread_ = std::thread([this] { serve(); });
  }
  ConnectProxy(const ConnectProxy&) = delete;
  ConnectProxy& operator=(const ConnectProxy&) = delete;
  ~ConnectProxy() {
    stopping_ = true;
    listener_.wake();
    thread_.join();
  }
  [[nodiscard]] std::uint16_t port() const { return listener_.port; }
  // Per tunnel asked for: "CONNECT <target> <Proxy-Authorization>" or "SOCKS5 <target> <user>:<password>".
  [[nodiscard]] std::vector<std::string> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    while (true) {
      tcp::socket client(listener_.ioc);
      boost::system::error_code ec;
      listener_.acceptor.accept(client, ec);
      if (stopping_ || ec) return;
      std::array<unsigned char, 1> first{};
      client.receive(net::buffer(first), tcp::socket::message_peek, ec);
      if (!ec && first[0] == 5) {
        socks5(client);
        continue;
      }
      boost::beast::flat_buffer buffer;
      http::request<http::empty_body> request;
      http::read(client, buffer, request, ec);
      if (ec) continue;
      const std::string target(request.target());
      const std::string authorization(request[http::field::proxy_authorization]);
      {
        const std::lock_guard lock(mutex_);
        requests_.push_back(std::string(request.method_string()) + " " + target + " " + authorization);
      }
      if (request.method() != http::verb::connect || authorization != wanted_) {
        net::write(client,
                   net::buffer(std::string_view(
                       "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")),
                   ec);
        continue;
      }
      tcp::socket upstream(listener_.ioc);
      upstream.connect({net::ip::make_address("127.0.0.1"),
                        static_cast<std::uint16_t>(std::stoi(target.substr(target.rfind(':') + 1)))},
                       ec);
      if (ec) continue;
      net::write(client, net::buffer(std::string_view("HTTP/1.1 200 Connection established\r\n\r\n")), ec);
      relay(client.native_handle(), upstream.native_handle());
    }
  }

  void socks5(tcp::socket& client) {
    boost::system::error_code ec;
    std::array<unsigned char, 256> in{};
    const auto read = [&](std::size_t n) {
      net::read(client, net::buffer(in.data(), n), ec);
      return std::string(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    };
    const auto write = [&](std::initializer_list<unsigned char> bytes) {
      net::write(client, net::buffer(std::vector<unsigned char>(bytes)), ec);
    };
    read(2);
    const std::string methods = read(in[1]);
    if (methods.find('\x02') == std::string::npos) return write({5, 0xFF});  // it wants a password
    write({5, 2});
    read(2);
    const std::string user = read(in[1]);
    read(1);
    const std::string password = read(in[0]);
    const bool accepted = user == user_ && password == password_;
    write({1, static_cast<unsigned char>(accepted ? 0 : 1)});
    std::string target = "(refused)";
    if (accepted) {
      read(4);  // VER CMD RSV ATYP: 3, a name, is what gpuadmit sends for one
      if (in[3] == 3) {
        read(1);
        target = read(in[0]);
      } else {
        target = "(address type " + std::to_string(in[3]) + ")";
      }
    }
    const std::string port_bytes = accepted ? read(2) : "";
    const int port = accepted ? (static_cast<unsigned char>(port_bytes[0]) << 8) |
                                    static_cast<unsigned char>(port_bytes[1])
                              : 0;
    {
      const std::lock_guard lock(mutex_);
      requests_.push_back("SOCKS5 " + target + ":" + std::to_string(port) + " " + user + ":" + password);
    }
    if (!accepted || ec) return;
    tcp::socket upstream(listener_.ioc);
    upstream.connect({net::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port)}, ec);
    if (ec) return write({5, 5, 0, 1, 0, 0, 0, 0, 0, 0});
    write({5, 0, 0, 1, 127, 0, 0, 1, 0, 0});
    relay(client.native_handle(), upstream.native_handle());
  }

  // Copies bytes both ways until either side closes.
  static void relay(int a, int b) {
    std::array<char, 16384> chunk{};
    while (true) {
      std::array<pollfd, 2> fds{pollfd{a, POLLIN, 0}, pollfd{b, POLLIN, 0}};
      if (::poll(fds.data(), fds.size(), 10000) <= 0) return;
      for (std::size_t i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = ::read(fds[i].fd, chunk.data(), chunk.size());
        if (n <= 0) return;
        const int to = i == 0 ? b : a;
        for (ssize_t sent = 0; sent < n;) {
          const ssize_t w = ::write(to, chunk.data() + sent, static_cast<std::size_t>(n - sent));
          if (w <= 0) return;
          sent += w;
        }
      }
    }
  }

  std::string user_;
  std::string password_;
  std::string wanted_;
  LoopbackAcceptor listener_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;  // last: started once everything it uses exists
};

std::shared_ptr<cluster::ApiTransport> transport_for(cluster::ApiConfig config,
                                                     cluster::TransportLimits limits = {}) {
  auto transport = cluster::make_https_transport(std::move(config), limits);
  REQUIRE(transport.ok());
  return *transport;
}

struct Collected {
  Result<cluster::ApiResponse> result = make_error("not run");
  std::vector<std::string> lines;
  bool opened = false;
};

Collected watch(cluster::ApiTransport& transport, std::chrono::seconds deadline = 5s,
                std::stop_token stop = {}) {
  Collected out;
  cluster::WatchCallbacks callbacks;
  callbacks.opened = [&] { out.opened = true; };
  callbacks.line = [&](std::string_view line) {
    out.lines.emplace_back(line);
    return true;
  };
  out.result = transport.watch("/api/v1/nodes?watch=1", deadline, callbacks, stop);
  return out;
}

}  // namespace

TEST_CASE("a chunked watch stream is cut into lines whatever the chunk boundaries", "[transport]") {
  TlsServer server([](const auto&, Peer& peer) {
    peer.start_chunked();
    peer.chunk("{\"a\":1}\n{\"b\"");
    peer.chunk(":2}\r\n");
    peer.chunk("\n{\"c\":3}");  // an empty line, then a last line without '\n'
    peer.end_chunked();
  });
  auto transport = transport_for(config_for(server));
  const Collected c = watch(*transport);
  REQUIRE(c.result.ok());
  CHECK(c.result->status == 200);
  CHECK(c.opened);
  CHECK(c.lines == std::vector<std::string>{R"({"a":1})", R"({"b":2})", R"({"c":3})"});
  CHECK(server.authorizations() == std::vector<std::string>{"Bearer secret"});
  CHECK(server.targets() == std::vector<std::string>{"/api/v1/nodes?watch=1"});
}

TEST_CASE("watch lines are handed over as they arrive, not when a buffer fills", "[transport]") {
  std::promise<void> first_line_seen;
  auto seen = first_line_seen.get_future();
  TlsServer server([&](const auto&, Peer& peer) {
    peer.start_chunked();
    peer.chunk("{\"n\":1}\n");
    // The second line is sent only once the client has handed over the first: a client that waited for
    // more bytes would stall here until its deadline.
    if (seen.wait_for(5s) == std::future_status::ready) peer.chunk("{\"n\":2}\n");
    peer.end_chunked();
  });
  auto transport = transport_for(config_for(server));
  std::vector<std::string> lines;
  cluster::WatchCallbacks callbacks;
  callbacks.line = [&](std::string_view line) {
    lines.emplace_back(line);
    if (lines.size() == 1) first_line_seen.set_value();
    return true;
  };
  const auto started = std::chrono::steady_clock::now();
  auto result = transport->watch("/w", 10s, callbacks, {});
  REQUIRE(result.ok());
  CHECK(lines.size() == 2);
  CHECK(std::chrono::steady_clock::now() - started < 3s);
}

TEST_CASE("a non-200 answer is returned with its body, for get and for watch", "[transport]") {
  const std::string status = R"({"kind":"Status","code":410,"reason":"Expired"})";
  TlsServer server([&](const auto&, Peer& peer) { peer.respond(410, status); });
  auto transport = transport_for(config_for(server));
  const Collected c = watch(*transport);
  REQUIRE(c.result.ok());
  CHECK(c.result->status == 410);
  CHECK(c.result->body == status);
  CHECK_FALSE(c.opened);
  CHECK(c.lines.empty());
  auto got = transport->get("/api/v1/nodes", {});
  REQUIRE(got.ok());
  CHECK(got->status == 410);
  CHECK(got->body == status);
}

TEST_CASE("get reads a whole body, with Content-Length or chunked", "[transport]") {
  const std::string body(300'000, 'x');
  SECTION("Content-Length") {
    TlsServer server([&](const auto&, Peer& peer) { peer.respond(200, body); });
    auto got = transport_for(config_for(server))->get("/api/v1/nodes?limit=500", {});
    REQUIRE(got.ok());
    CHECK(got->body == body);
  }
  SECTION("chunked") {
    TlsServer server([&](const auto&, Peer& peer) {
      peer.start_chunked();
      peer.chunk(body.substr(0, 100'000));
      peer.chunk(body.substr(100'000));
      peer.end_chunked();
    });
    auto got = transport_for(config_for(server))->get("/api/v1/nodes?limit=500", {});
    REQUIRE(got.ok());
    CHECK(got->body == body);
  }
}

TEST_CASE("limits: an oversized body, watch line or header is an error, not an allocation", "[transport]") {
  cluster::TransportLimits limits;
  limits.max_body_bytes = 1000;
  limits.max_line_bytes = 100;
  limits.max_header_bytes = 2048;
  struct Case {
    const char* description;
    Handler handler;
    bool use_watch;
    std::string message;
  };
  const std::vector<Case> cases{
      {"a LIST body over max_body_bytes",
       [](const auto&, Peer& p) { p.respond(200, std::string(5000, 'x')); }, false, "larger than 1000 bytes"},
      {"a watch line over max_line_bytes, split across chunks",
       [](const auto&, Peer& p) {
         p.start_chunked();
         p.chunk(std::string(60, 'x'));
         p.chunk(std::string(60, 'x'));
         p.end_chunked();
       },
       true, "watch event from https://127.0.0.1:"},
      {"a response header over max_header_bytes",
       [](const auto&, Peer& p) {
         p.write("HTTP/1.1 200 OK\r\nX-Big: " + std::string(4096, 'y') + "\r\nContent-Length: 0\r\n\r\n");
       },
       false, "read response header"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      TlsServer server(c.handler);
      auto transport = transport_for(config_for(server), limits);
      auto result = c.use_watch ? watch(*transport).result : transport->get("/x", {});
      REQUIRE_FALSE(result.ok());
      CHECK_THAT(result.error().message, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("deadlines: a server that stalls at any step fails the call in bounded time", "[transport]") {
  cluster::TransportLimits limits;
  limits.handshake_timeout = 300ms;
  limits.response_timeout = 300ms;
  limits.watch_idle_timeout = 300ms;
  struct Case {
    const char* description;
    bool handshake;
    Handler handler;
    bool use_watch;
    std::string message;
  };
  const std::vector<Case> cases{
      {"accepts TCP but never completes the TLS handshake", false, nullptr, false, "TLS handshake"},
      {"never answers the request", true, [](const auto&, Peer& p) { p.wait_for_close(); }, false,
       "read response header"},
      {"sends half a body, then nothing", true,
       [](const auto&, Peer& p) {
         p.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
         p.wait_for_close();
       },
       false, "read response body"},
      {"opens a watch stream, then stays silent past the idle timeout", true,
       [](const auto&, Peer& p) {
         p.start_chunked();
         p.chunk("{}\n");
         p.wait_for_close();
       },
       true, "no data for 300 ms"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      TlsServer server(c.handler, c.handshake);
      auto transport = transport_for(config_for(server), limits);
      const auto started = std::chrono::steady_clock::now();
      auto result = c.use_watch ? watch(*transport).result : transport->get("/x", {});
      const auto took = std::chrono::steady_clock::now() - started;
      REQUIRE_FALSE(result.ok());
      CHECK_THAT(result.error().message, Catch::Contains(c.message));
      CHECK(took < 3s);
    }
  }
}

TEST_CASE("a watch ends with an error at its overall deadline even while data keeps coming", "[transport]") {
  std::atomic<bool> done{false};
  TlsServer server([&](const auto&, Peer& peer) {
    peer.start_chunked();
    while (!done) {
      peer.chunk("{}\n");
      std::this_thread::sleep_for(100ms);
    }
  });
  auto transport = transport_for(config_for(server));
  const auto started = std::chrono::steady_clock::now();
  const Collected c = watch(*transport, 1s);
  done = true;
  REQUIRE_FALSE(c.result.ok());
  CHECK(std::chrono::steady_clock::now() - started < 3s);
  CHECK(c.lines.size() >= 3);
}

TEST_CASE("stopping a call in flight ends it at once", "[transport]") {
  TlsServer server([](const auto&, Peer& peer) {
    peer.start_chunked();
    peer.wait_for_close();
  });
  auto transport = transport_for(config_for(server));
  std::stop_source stop;
  auto call = std::async(std::launch::async, [&] { return watch(*transport, 60s, stop.get_token()); });
  std::this_thread::sleep_for(200ms);  // let it connect; the assertion below is about what follows
  const auto requested = std::chrono::steady_clock::now();
  stop.request_stop();
  REQUIRE(call.wait_for(2s) == std::future_status::ready);
  const Collected c = call.get();
  CHECK(std::chrono::steady_clock::now() - requested < 2s);
  REQUIRE_FALSE(c.result.ok());
  CHECK(c.result.error().message == "stopped");
}

TEST_CASE("the server certificate must chain to the configured CA and name the host dialled", "[transport]") {
  struct Case {
    const char* description;
    std::string host;
    std::string tls_server_name;
    bool other_ca;
    bool ok;
    std::string message;
  };
  const std::vector<Case> cases{
      {"IP 127.0.0.1, in the certificate's IP SANs: accepted", "127.0.0.1", "", false, true, ""},
      {"DNS name localhost (resolved), in the DNS SANs: accepted", "localhost", "", false, true, ""},
      {"IP dialled, tls-server-name localhost: accepted", "127.0.0.1", "localhost", false, true, ""},
      {"a certificate from another CA: refused", "127.0.0.1", "", true, false,
       "server certificate not trusted: unable to get local issuer certificate"},
      {"tls-server-name the certificate does not carry: refused", "127.0.0.1", "api.example.com", false,
       false, "server certificate not trusted: hostname mismatch"},
      {"an IP the certificate does not carry: refused", "127.0.0.1", "127.0.0.2", false, false,
       "server certificate not trusted: IP address mismatch"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{}"); });
      cluster::ApiConfig config = config_for(server, c.host);
      config.tls_server_name = c.tls_server_name;
      if (c.other_ca) config.ca_pem = pki().other_ca.certificate;
      auto result = transport_for(config)->get("/version", {});
      CHECK(result.ok() == c.ok);
      if (!c.ok && !result.ok()) CHECK_THAT(result.error().message, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("the token file is read for every request, and a briefly missing file keeps the last token",
          "[transport]") {
  TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{}"); });
  const std::filesystem::path token =
      std::filesystem::temp_directory_path() / ("gpuadmit-token-test-" + std::to_string(::getpid()));
  cluster::ApiConfig config = config_for(server);
  config.token.clear();
  config.token_file = token;
  auto transport = transport_for(config);
  std::ofstream(token, std::ios::trunc) << "first\n";
  REQUIRE(transport->get("/a", {}).ok());
  std::ofstream(token, std::ios::trunc) << "rotated";
  REQUIRE(transport->get("/b", {}).ok());
  std::filesystem::remove(token);
  REQUIRE(transport->get("/c", {}).ok());
  CHECK(server.authorizations() ==
        std::vector<std::string>{"Bearer first", "Bearer rotated", "Bearer rotated"});
}

namespace {

// Three requests with `plugin` as the credential plugin: /a (its first credential refused, the second
// taken), /b (the second kept), /always-401 (refused twice: a third credential, then the 401 returned).
void requests_through_plugin(const TlsServer& server, const std::filesystem::path& plugin) {
  cluster::ApiConfig config = config_for(server);
  config.token.clear();
  config.exec = cluster::ExecPlugin{
      plugin.string(), {}, {}, "client.authentication.k8s.io/v1", "", cluster::InteractiveMode::kNever,
      "test exec",     ""};
  auto transport = transport_for(config);
  auto first = transport->get("/a", {});
  REQUIRE(first.ok());
  CHECK(first->status == 200);
  REQUIRE(transport->get("/b", {}).ok());
  auto refused = transport->get("/always-401", {});
  REQUIRE(refused.ok());
  CHECK(refused->status == 401);
}

}  // namespace

// A credential plugin (GKE's, EKS's, AKS's login): its token is sent and kept; a 401 runs the plugin again
// and the request is retried once; a second 401 is returned as it is.
TEST_CASE("an exec plugin's token is sent, kept, and fetched again once after a 401", "[transport]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpuadmit-exec-transport-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Each run prints the token "run-N" (N counts the runs).
  const std::filesystem::path plugin = dir / "plugin.sh";
  std::ofstream(plugin)
      << "#!/bin/sh\nn=$(($(cat \"$0.count\" 2>/dev/null || echo 0) + 1)); echo $n >\"$0.count\"\n"
         "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
         "\"status\":{\"token\":\"run-%s\"}}' $n\n";
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  // run-1 is refused (revoked); run-2 is accepted; "/always-401" refuses everything.
  TlsServer server([](const auto& request, Peer& peer) {
    const bool refused =
        request[http::field::authorization] == "Bearer run-1" || request.target() == "/always-401";
    peer.respond(refused ? 401 : 200, "{}");
  });
  requests_through_plugin(server, plugin);
  CHECK(server.authorizations() == std::vector<std::string>{"Bearer run-1", "Bearer run-2", "Bearer run-2",
                                                            "Bearer run-2", "Bearer run-3"});
  std::filesystem::remove_all(dir);
}

// A credential plugin that hands out client certificates (as some corporate logins and Teleport's do): the
// certificate is presented in the handshake, kept while it is valid, and fetched again after a 401.
TEST_CASE("an exec plugin's client certificate is presented, kept, and fetched again once after a 401",
          "[transport]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpuadmit-exec-cert-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Run N prints credential N (plugin.sh.N.json): a certificate whose common name is "client-N".
  for (int n = 1; n <= 3; ++n) {
    const std::string name = "client-" + std::to_string(n);
    auto client = server::generate_serving_certificate(pki().ca, {{name}, {}, 1, name, true});
    REQUIRE(client.ok());
    const nlohmann::json credential = {
        {"apiVersion", "client.authentication.k8s.io/v1"},
        {"kind", "ExecCredential"},
        {"status", {{"clientCertificateData", client->certificate}, {"clientKeyData", client->private_key}}}};
    std::ofstream(dir / ("plugin.sh." + std::to_string(n) + ".json")) << credential.dump();
  }
  const std::filesystem::path plugin = dir / "plugin.sh";
  std::ofstream(plugin) << "#!/bin/sh\nn=$(($(cat \"$0.count\" 2>/dev/null || echo 0) + 1)); echo $n "
                           ">\"$0.count\"\ncat \"$0.$n.json\"\n";
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  // client-1 is refused (revoked); client-2 is accepted; "/always-401" refuses everything.
  TlsServer server([&server](const auto& request, Peer& peer) {
    const bool refused = server.clients().back() == "client-1" || request.target() == "/always-401";
    peer.respond(refused ? 401 : 200, "{}");
  });
  requests_through_plugin(server, plugin);
  CHECK(server.clients() ==
        std::vector<std::string>{"client-1", "client-2", "client-2", "client-2", "client-3"});
  CHECK(server.authorizations() == std::vector<std::string>(5, ""));  // no token: no Authorization header
  std::filesystem::remove_all(dir);
}

// A kubeconfig's proxy-url (or HTTPS_PROXY): the request goes through a CONNECT tunnel with the proxy's
// credentials, the API server's certificate is still verified for its own name, and the bearer token travels
// inside TLS, where the proxy cannot read it.
TEST_CASE(
    "through an HTTP proxy: a CONNECT tunnel with the proxy's credentials, TLS to the API server inside",
    "[transport]") {
  TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{\"through\":\"proxy\"}"); });
  ConnectProxy proxy("user", "pw", "Basic dXNlcjpwdw==");  // base64 of user:pw
  cluster::ApiConfig config = config_for(server, "localhost");
  auto url = cluster::parse_proxy_url("http://user:pw@127.0.0.1:" + std::to_string(proxy.port()));
  REQUIRE(url);
  config.proxy = *url;
  auto response = transport_for(config)->get("/api", {});
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  CHECK(response->body == "{\"through\":\"proxy\"}");
  CHECK(proxy.requests() == std::vector<std::string>{"CONNECT localhost:" + std::to_string(server.port()) +
                                                     " Basic dXNlcjpwdw=="});
  CHECK(server.authorizations() == std::vector<std::string>{"Bearer secret"});

  // Wrong credentials: the proxy's 407 is the error, with what to do.
  auto wrong = cluster::parse_proxy_url("http://user:nope@127.0.0.1:" + std::to_string(proxy.port()));
  REQUIRE(wrong);
  config.proxy = *wrong;
  auto refused = transport_for(config)->get("/api", {});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message,
             Catch::Contains("the proxy http://user@127.0.0.1:" + std::to_string(proxy.port()) +
                             " refused CONNECT localhost:" + std::to_string(server.port()) +
                             ": 407 Proxy Authentication Required (it wants credentials"));
  CHECK(server.authorizations().size() == 1);  // nothing reached the API server

  // A proxy that is not there: the error names the proxy, not the API server.
  config.proxy = cluster::Proxy{cluster::ProxyScheme::kHttp, "127.0.0.1", 1, "", "http://127.0.0.1:1"};
  auto absent = transport_for(config)->get("/api", {});
  REQUIRE_FALSE(absent.ok());
  CHECK_THAT(absent.error().message, Catch::StartsWith("connect to the proxy http://127.0.0.1:1: "));
}

// A kubeconfig's proxy-url socks5://user:password@host:port (an `ssh -D` tunnel to a private cluster's
// network): SOCKS5's CONNECT with the API server's name for the proxy to resolve, user and password by RFC
// 1929, and TLS to the API server inside.
TEST_CASE("through a SOCKS5 proxy: its CONNECT by name with user and password, TLS to the API server inside",
          "[transport]") {
  TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{\"through\":\"socks\"}"); });
  ConnectProxy proxy("user", "pw", "Basic dXNlcjpwdw==");  // base64 of user:pw
  cluster::ApiConfig config = config_for(server, "localhost");
  auto url = cluster::parse_proxy_url("socks5://user:pw@127.0.0.1:" + std::to_string(proxy.port()));
  REQUIRE(url);
  config.proxy = *url;
  auto response = transport_for(config)->get("/api", {});
  REQUIRE(response.ok());
  CHECK(response->body == "{\"through\":\"socks\"}");
  CHECK(proxy.requests() ==
        std::vector<std::string>{"SOCKS5 localhost:" + std::to_string(server.port()) + " user:pw"});
  CHECK(server.authorizations() == std::vector<std::string>{"Bearer secret"});

  auto wrong = cluster::parse_proxy_url("socks5://user:nope@127.0.0.1:" + std::to_string(proxy.port()));
  REQUIRE(wrong);
  config.proxy = *wrong;
  auto refused = transport_for(config)->get("/api", {});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message,
             Catch::Contains("SOCKS5 proxy socks5://user@127.0.0.1:" + std::to_string(proxy.port()) +
                             " refused the user name and password of the proxy URL"));
  auto none = cluster::parse_proxy_url("socks5://127.0.0.1:" + std::to_string(proxy.port()));
  REQUIRE(none);
  config.proxy = *none;
  auto unauthenticated = transport_for(config)->get("/api", {});
  REQUIRE_FALSE(unauthenticated.ok());
  CHECK_THAT(unauthenticated.error().message,
             Catch::Contains("accepts none of the ways offered (none: give user:password@ in the URL)"));
  CHECK(server.authorizations().size() == 1);  // nothing else reached the API server
}

// A kubeconfig's insecure-skip-tls-verify: the server's certificate, of a CA nobody configured, is accepted.
TEST_CASE("insecure-skip-tls-verify connects without verifying the server's certificate", "[transport]") {
  TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{}"); });
  cluster::ApiConfig config = config_for(server, "localhost.invalid");  // not the certificate's name either
  config.host = "127.0.0.1";
  config.tls_server_name = "localhost.invalid";
  config.ca_pem.clear();
  config.insecure_skip_tls_verify = true;
  auto response = transport_for(config)->get("/a", {});
  REQUIRE(response.ok());
  CHECK(response->status == 200);
}

// A cluster CA rotation (#47 item 6): the kubelet writes both CAs into the service account's ca.crt, then
// the API server moves to a certificate of the new one. A transport that read the file once at start would
// lose the API server then, and the view would stay stale until a restart.
TEST_CASE("the CA file is read before each connection, and one that holds no CA keeps the last",
          "[transport]") {
  TlsServer server([](const auto&, Peer& peer) { peer.respond(200, "{}"); });
  const std::filesystem::path ca =
      std::filesystem::temp_directory_path() / ("gpuadmit-ca-test-" + std::to_string(::getpid()));
  std::ofstream(ca, std::ios::trunc) << pki().other_ca.certificate;
  cluster::ApiConfig config = config_for(server);
  config.ca_pem = pki().other_ca.certificate;
  config.ca_file = ca;
  auto transport = transport_for(config);
  auto before = transport->get("/a", {});
  REQUIRE_FALSE(before.ok());
  CHECK_THAT(before.error().message, Catch::Contains("server certificate not trusted"));
  std::ofstream(ca, std::ios::trunc) << pki().other_ca.certificate << pki().ca.certificate;
  CHECK(transport->get("/b", {}).ok());
  std::ofstream(ca, std::ios::trunc) << "not a certificate";
  CHECK(transport->get("/c", {}).ok());
  std::filesystem::remove(ca);
  CHECK(transport->get("/d", {}).ok());
}

TEST_CASE("nothing listening: the error names the step and the URL", "[transport]") {
  std::uint16_t port = 0;
  {
    net::io_context ioc;
    tcp::acceptor probe(ioc, {net::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  cluster::ApiConfig config;
  config.host = "127.0.0.1";
  config.port = port;
  config.ca_pem = pki().ca.certificate;
  config.source = "test";
  auto result = transport_for(config)->get("/x", {});
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message ==
        "connect https://127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST_CASE("an unusable configuration is refused when the transport is made", "[transport]") {
  struct Case {
    const char* description;
    std::function<void(cluster::ApiConfig&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases{
      {"a CA that is not PEM", [](cluster::ApiConfig& c) { c.ca_pem = "garbage"; },
       "the CA is not a PEM certificate"},
      {"no CA", [](cluster::ApiConfig& c) { c.ca_pem.clear(); }, "no CA to verify the API server with"},
      {"a client key that does not match the certificate",
       [](cluster::ApiConfig& c) {
         c.client_certificate_pem = pki().serving.certificate;
         c.client_key_pem = pki().ca.private_key;
       },
       "cannot use the client key: key values mismatch"},
      {"a client certificate that is not PEM",
       [](cluster::ApiConfig& c) {
         c.client_certificate_pem = "nope";
         c.client_key_pem = pki().ca.private_key;
       },
       "cannot use the client certificate"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      cluster::ApiConfig config;
      config.host = "127.0.0.1";
      config.port = 1;
      config.ca_pem = pki().ca.certificate;
      config.source = "test";
      c.spoil(config);
      auto transport = cluster::make_https_transport(config);
      REQUIRE_FALSE(transport.ok());
      CHECK_THAT(transport.error().message, Catch::Contains(c.message));
    }
  }
}

}  // namespace gpuadmit::test
