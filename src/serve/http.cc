#include "serve/http.h"

#include <httplib.h>

#include <cstdio>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"

namespace kiln::serve {

using nlohmann::json;

namespace {

bool SameToken(const std::string& a, const std::string& b) {  // constant time in the token's length
  unsigned diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i % (b.size() ? b.size() : 1)]);
  return diff == 0 && !b.empty();
}

void Reply(httplib::Response& res, const HttpOptions& o, int status, const json& body) {
  std::string text = body.dump();
  if (text.size() > o.max_response_bytes) {
    status = 413;
    text = json{{"error", fmt::format("the response ({} bytes) exceeds --max-response-bytes {}; send fewer items per "
                                      "request",
                                      text.size(), o.max_response_bytes)}}
               .dump();
  }
  res.status = status;
  res.set_content(text + "\n", "application/json");
}

}  // namespace

bool IsLoopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

int Serve(Service* service, const HttpOptions& o) {
  httplib::Server srv;
  const int threads = o.threads;
  srv.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  srv.set_payload_max_length(o.max_body_bytes);
  srv.set_read_timeout(30, 0);
  srv.set_write_timeout(30, 0);
  srv.set_pre_routing_handler([&o](const httplib::Request& req, httplib::Response& res) {
    if (o.token.empty() || req.path == "/v1/health") return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0 && SameToken(auth.substr(7), o.token))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    Reply(res, o, 401,
          {{"error", auth.empty() ? "missing bearer token (Authorization: Bearer TOKEN)" : "wrong token"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  srv.Post("/v1/rewards", [&](const httplib::Request& req, httplib::Response& res) {
    json body;
    if (int depth = JsonDepth(req.body); depth > kMaxJsonDepth) {
      Reply(res, o, 400, {{"error", fmt::format("JSON nested {} levels deep (at most {})", depth, kMaxJsonDepth)}});
      return;
    }
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      Reply(res, o, 400, {{"error", fmt::format("malformed JSON: {}", e.what())}});
      return;
    }
    double wait = o.default_wait_s;
    if (body.is_object() && body.contains("deadline_s") && body["deadline_s"].is_number())
      wait = body["deadline_s"].get<double>();
    if (body.is_object() && body.contains("async") && !body["async"].is_boolean()) {
      Reply(res, o, 400, {{"error", "async: expected true or false"}});
      return;
    }
    if (body.is_object() && body.value("async", false)) wait = -1;
    std::string key = req.get_header_value("Idempotency-Key");
    if (key.empty() && body.is_object() && body.contains("idempotency_key") && body["idempotency_key"].is_string())
      key = body["idempotency_key"].get<std::string>();
    if (body.is_object()) {
      body.erase("async");
      body.erase("idempotency_key");
    }
    Answer a = service->Submit(body, key, wait);
    if (a.http == 429) res.set_header("Retry-After", std::to_string(a.retry_after_s));
    if (a.http == 202 && a.body.contains("location")) res.set_header("Location", a.body["location"].get<std::string>());
    Reply(res, o, a.http, a.body);
  });
  srv.Get(R"(/v1/jobs/([A-Za-z0-9_-]+))", [&](const httplib::Request& req, httplib::Response& res) {
    Answer a = service->Job(req.matches[1]);
    Reply(res, o, a.http, a.body);
  });
  srv.Get("/v1/health",
          [&](const httplib::Request&, httplib::Response& res) { Reply(res, o, 200, service->Health()); });
  srv.Get("/v1/tasks", [&](const httplib::Request&, httplib::Response& res) {
    // via Health's task count and the task list
    Reply(res, o, 200, {{"tasks", service->Tasks()}});
  });
  srv.Get("/v1/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(service->MetricsText(), "text/plain; version=0.0.4");
  });
  srv.set_error_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413 && req.get_header_value("Content-Type").find("x-www-form-urlencoded") != std::string::npos)
      Reply(res, o, 413, {{"error", "a form-encoded body is limited to 8 KiB: send Content-Type: application/json"}});
    else if (res.status == 413)
      Reply(res, o, 413,
            {{"error", fmt::format("request body over the limit of {} bytes (--max-body-bytes)", o.max_body_bytes)}});
    else if (res.status == 404)
      Reply(res, o, 404, {{"error", fmt::format("no route {} {}", req.method, req.path)}});
    else if (res.body.empty())
      Reply(res, o, res.status, json{{"error", fmt::format("HTTP {}", res.status)}});
  });
  int port = o.port;
  if (port == 0) {
    port = srv.bind_to_any_port(o.host);
    if (port < 0) port = -1;
  } else if (!srv.bind_to_port(o.host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::fprintf(stderr, "kiln serve: cannot listen on %s:%d (in use, or not an address of this host)\n",
                 o.host.c_str(), o.port);
    return 2;
  }
  std::fprintf(stderr, "kiln serve: listening on http://%s:%d\n", o.host.c_str(), port);
  if (!o.port_file.empty()) (void)WriteFile(o.port_file, std::to_string(port) + "\n");
  return srv.listen_after_bind() ? 0 : 2;
}

}  // namespace kiln::serve
