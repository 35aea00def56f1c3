// kiln/serve: the HTTP/JSON face of the reward service (cpp-httplib): routes, bearer token, size
// limits, JSON errors (docs/serve.md, "API").
#pragma once

#include <string>

#include "serve/service.h"

namespace kiln::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port (written to port_file)
  std::string token;  // empty: no token (loopback only)
  size_t max_body_bytes = 16u << 20;
  size_t max_response_bytes = 64u << 20;
  double default_wait_s = 600;  // a synchronous request's deadline unless it gives "deadline_s"
  std::string port_file;        // non-empty: the bound port is written here once listening
  int threads = 64;             // connection threads (a synchronous request holds one while it waits)
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopback(const std::string& host);

// Serves until the process is stopped; returns 2 when it cannot bind.
int Serve(Service* service, const HttpOptions& o);

}  // namespace kiln::serve
