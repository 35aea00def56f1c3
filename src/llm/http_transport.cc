// kiln/llm: the HTTP(S) transport over Debian's cpp-httplib (built with OpenSSL: https verifies the
// server's certificate against the system's CA store).
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "llm/client.h"

namespace kiln::llm {

namespace {

std::pair<time_t, time_t> SecUsec(double s) {
  const auto sec = static_cast<time_t>(s);
  return {sec, static_cast<time_t>((s - static_cast<double>(sec)) * 1e6)};
}

}  // namespace

Result<HttpReply> HttpTransport::Post(const Endpoint& ep, const std::string& body,
                                      const std::map<std::string, std::string>& headers, double connect_timeout_s,
                                      double timeout_s) {
  httplib::Client cli(ep.Origin());
  auto [cs, cu] = SecUsec(connect_timeout_s);
  auto [rs, ru] = SecUsec(timeout_s);
  cli.set_connection_timeout(cs, cu);
  cli.set_read_timeout(rs, ru);
  cli.set_write_timeout(rs, ru);
  cli.set_keep_alive(false);
  httplib::Headers h;
  std::string content_type = "application/json";
  for (const auto& [k, v] : headers) {
    if (k == "Content-Type")
      content_type = v;
    else
      h.emplace(k, v);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto res = cli.Post(ep.path, h, body, content_type);
  if (!res) {
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto err = res.error();
    if (err == httplib::Error::ConnectionTimeout || (err == httplib::Error::Read && took >= timeout_s * 0.95))
      return Timeout(fmt::format("no answer within {:.0f} s", err == httplib::Error::ConnectionTimeout
                                                                  ? connect_timeout_s
                                                                  : timeout_s));
    if (err == httplib::Error::SSLServerVerification || err == httplib::Error::SSLLoadingCerts)
      return InvalidArgument(fmt::format("{}: TLS: {}", ep.Origin(), httplib::to_string(err)));
    return Unavailable(fmt::format("{}: {}", ep.Origin(), httplib::to_string(err)));
  }
  HttpReply r;
  r.status = res->status;
  r.body = res->body;
  for (const auto& [k, v] : res->headers) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    r.headers[lower] = v;
  }
  return r;
}

}  // namespace kiln::llm
