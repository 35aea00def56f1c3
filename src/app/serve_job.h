// kiln/app: `kiln serve`, the reward service for RL training (docs/serve.md): loads the task set and
// the reward formula, starts the worker pool (every GPU of the host: check workers, then exclusive
// timing; interpreter workers without a GPU), finishes the journal's unfinished jobs, and serves HTTP.
//
// Exit codes: 2 for usage or infrastructure errors at start (a non-loopback --host without
// --token-file, unreadable tasks or token, no worker, port in use); it otherwise runs until stopped.
#pragma once

#include <cstdint>
#include <string>

#include "app/options.h"

namespace kiln::app {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string port_file;
  std::string token_file;
  std::string tasks;
  std::string reward = "autotriton";
  std::string mode = "check", policy = "strict", isolation = "fork";
  uint64_t seed = 1234;
  int trials = 3;
  double timeout_s = 60;  // per item (a request's deadline_s lowers it)
  double wait_s = 600;    // synchronous requests' default deadline
  size_t queue_limit = 1024;
  size_t max_items = 256;
  size_t max_body_bytes = 16u << 20;
  size_t max_response_bytes = 64u << 20;
  size_t batch_max = 64;
  int workers = 1;         // interpreter workers without a GPU
  int check_workers = -1;  // per GPU; -1: automatic
  int gpus = -1;
  RecordsOptions records;
  bool no_cache = false;
  WorkerFlags worker;
};

int RunServe(const ServeOptions& o);

}  // namespace kiln::app
