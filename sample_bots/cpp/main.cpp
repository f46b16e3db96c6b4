// greedy-cpp: a sample Las Vegas bot in C++ (gRPC C++ sync API, code generated from
// proto/lasvegas/v1/bot.proto by the Makefile). A guide to writing one: docs/bots/cpp.md.
//
// It listens on `--address ADDR` or $REFEREE_BOT_ADDRESS (docs/protocol.md, "Address contract"),
// answers Hello, serves one Play stream per game, and exits on SIGTERM or SIGINT.
//
// Strategy: greedy. For each legal action, what this seat would win on the target casino if the
// round ended now, after the move minus before it: counts with big dice worth 2 (R20), equal
// counts cancelling with the neutral dice as one more participant (R21), notes paid highest
// first (R22) and, on the slot machine, the leaders ordered by face sum then physical dice
// (R32). The largest gain wins; ties go to fewer dice placed, then the lowest value, then the
// casino before the slot. The gain is sent back as a note (Decision.values).

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "lasvegas/v1/bot.grpc.pb.h"

namespace lv = lasvegas::v1;

namespace {

constexpr char kName[] = "greedy-cpp";
constexpr char kVersion[] = "1.0";
constexpr unsigned kProtocolVersion = 1;
constexpr unsigned kMaxConcurrentGames = 8;
constexpr unsigned kSlotTarget = 7;

int count_value(const google::protobuf::RepeatedField<uint32_t>& faces, unsigned value) {
  return static_cast<int>(std::count(faces.begin(), faces.end(), value));
}

// What participant `me` wins on one casino. counts[p] is participant p's count (seats first,
// the neutral player last). On the slot, keys[p] = (face sum, physical dice) orders the leaders.
long winnings(const std::vector<int>& counts, std::vector<unsigned> notes, size_t me,
              const std::vector<std::pair<int, int>>* keys) {
  if (notes.empty() || counts[me] == 0) return 0;
  std::map<int, int> freq;
  for (int c : counts) if (c) ++freq[c];
  std::vector<size_t> ranked;
  if (keys == nullptr) {
    for (size_t p = 0; p < counts.size(); ++p)
      if (counts[p] && freq[counts[p]] == 1) ranked.push_back(p);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](size_t a, size_t b) { return counts[a] > counts[b]; });
  } else {
    const int top = *std::max_element(counts.begin(), counts.end());
    std::vector<size_t> leaders, below;
    for (size_t p = 0; p < counts.size(); ++p) {
      if (!counts[p]) continue;
      if (counts[p] == top) leaders.push_back(p);
      else if (freq[counts[p]] == 1) below.push_back(p);
    }
    std::map<std::pair<int, int>, int> key_freq;
    for (size_t p : leaders) ++key_freq[(*keys)[p]];
    for (size_t p : leaders)
      if (key_freq[(*keys)[p]] == 1) ranked.push_back(p);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](size_t a, size_t b) { return (*keys)[a] > (*keys)[b]; });
    std::stable_sort(below.begin(), below.end(),
                     [&](size_t a, size_t b) { return counts[a] > counts[b]; });
    ranked.insert(ranked.end(), below.begin(), below.end());
  }
  const auto it = std::find(ranked.begin(), ranked.end(), me);
  const size_t rank = static_cast<size_t>(it - ranked.begin());
  if (it == ranked.end() || rank >= notes.size()) return 0;
  std::sort(notes.begin(), notes.end(), std::greater<unsigned>());
  return notes[rank];
}

struct Gain {
  long gain;
  int placed;
};

// The gain of `action` for seat `me`: winnings on its target after the move minus before.
Gain action_gain(const lv::DecisionRequest& request, size_t me, const lv::Action& action) {
  const lv::State& state = request.state();
  const lv::Roll& roll = request.roll();
  const unsigned value = action.value();
  const unsigned target = action.slot() ? kSlotTarget : value;
  const int own = count_value(roll.ordinary(), value);
  const int big = count_value(roll.big(), value);
  const int neutral_dice = count_value(roll.neutral(), value);
  const Gain none{0, own + big + neutral_dice};
  const lv::Casino* casino = nullptr;
  for (const auto& c : state.casinos())
    if (c.target() == target) casino = &c;
  if (casino == nullptr) return none;

  const size_t players = std::max<size_t>(state.seats_size(), me + 1);
  const size_t neutral = players;  // index of the neutral participant
  std::vector<int> counts(players + 1, 0), physical(players + 1, 0);
  for (const auto& d : casino->dice()) {
    if (d.seat() >= players) continue;
    counts[d.seat()] = static_cast<int>(d.ordinary() + 2 * d.big());  // R20
    physical[d.seat()] = static_cast<int>(d.ordinary() + d.big());
  }
  counts[neutral] = physical[neutral] = static_cast<int>(casino->neutral_dice());

  std::vector<int> sums;
  if (action.slot()) {
    sums.assign(players + 1, 0);
    for (const auto& s : state.slot_dice()) {
      if (s.seat() < players) sums[s.seat()] += s.value() * (s.ordinary() + s.big());
      sums[neutral] += s.value() * s.neutral();
    }
  }
  const std::vector<unsigned> notes(casino->notes().begin(), casino->notes().end());
  auto score = [&]() {
    if (sums.empty()) return winnings(counts, notes, me, nullptr);
    std::vector<std::pair<int, int>> keys;
    for (size_t p = 0; p <= players; ++p) keys.emplace_back(sums[p], physical[p]);
    return winnings(counts, notes, me, &keys);
  };
  const long before = score();
  counts[me] += own + 2 * big;
  physical[me] += own + big;
  counts[neutral] += neutral_dice;
  physical[neutral] += neutral_dice;
  if (!sums.empty()) {
    sums[me] += static_cast<int>(value) * (own + big);
    sums[neutral] += static_cast<int>(value) * neutral_dice;
  }
  return {score() - before, none.placed};
}

// Fill `decision` with the best legal action for `me` (legal is never empty).
void choose(const lv::DecisionRequest& request, size_t me, lv::Decision* decision) {
  const lv::Action* best = nullptr;
  std::tuple<long, int, int, int> best_score;
  for (const auto& action : request.legal()) {
    const Gain g = action_gain(request, me, action);
    const auto score = std::make_tuple(g.gain, -g.placed, -static_cast<int>(action.value()),
                                       action.slot() ? 0 : 1);
    if (best == nullptr || score > best_score) {
      best = &action;
      best_score = score;
    }
  }
  decision->set_request_id(request.request_id());
  if (best != nullptr) {
    *decision->mutable_action() = *best;
    (*decision->mutable_values())["gain"] = static_cast<double>(std::get<0>(best_score));
  }
}

class BotService final : public lv::Bot::Service {
  grpc::Status Hello(grpc::ServerContext*, const lv::HelloRequest*,
                     lv::HelloReply* reply) override {
    reply->set_bot_name(kName);
    reply->set_bot_version(kVersion);
    reply->set_protocol_version(kProtocolVersion);
    reply->set_max_concurrent_games(kMaxConcurrentGames);
    return grpc::Status::OK;
  }

  // One call per game; per-game state lives in this function's locals.
  grpc::Status Play(grpc::ServerContext*,
                    grpc::ServerReaderWriter<lv::BotMessage, lv::RefereeMessage>* stream)
      override {
    size_t my_seat = 0;
    lv::RefereeMessage message;
    lv::BotMessage answer;
    while (stream->Read(&message)) {
      switch (message.kind_case()) {
        case lv::RefereeMessage::kStart:
          my_seat = message.start().your_seat();
          break;
        case lv::RefereeMessage::kDecision:
          answer.Clear();
          choose(message.decision(), my_seat, answer.mutable_decision());
          if (!stream->Write(answer)) return grpc::Status::OK;  // the referee has gone
          break;
        case lv::RefereeMessage::kEnd:
          return grpc::Status::OK;
        default:
          break;  // a future message kind that needs no answer
      }
    }
    return grpc::Status::OK;  // the referee half-closed its side
  }
};

std::string listen_address(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--address" && i + 1 < argc) return argv[i + 1];
    if (arg.rfind("--address=", 0) == 0) return arg.substr(10);
  }
  const char* env = std::getenv("REFEREE_BOT_ADDRESS");
  return env ? env : "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string address = listen_address(argc, argv);
  if (address.empty()) {
    std::cerr << kName << ": no address: pass --address ADDR or set REFEREE_BOT_ADDRESS\n";
    return 2;
  }
  if (address.rfind("unix:", 0) == 0) {  // the socket must not exist yet: remove a stale one
    const std::string path = address.substr(5);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
  }
  // Block SIGTERM and SIGINT in every thread (gRPC's start later), then wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  BotService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << kName << ": cannot listen on " << address << "\n";
    return 1;
  }
  std::cerr << kName << " " << kVersion << " listening on " << address << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cerr << kName << ": signal " << signal_number << ", shutting down" << std::endl;
  // Open streams get half a second, well inside the referee's grace period.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  return 0;
}
