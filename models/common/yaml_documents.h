#pragma once
// How many YAML documents a text holds, without yaml-cpp's LoadAll().
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <string>

namespace fabricsim {

/// Line (1-based) at which a second YAML document of `text` begins (its `---`
/// line), or 0 if `text` holds at most one. yaml-cpp's Load() keeps the first
/// document and drops the rest without a word; LoadAll() can run out of
/// memory on malformed text (its parser returns empty documents without end,
/// found by fuzzing), so at most two documents are parsed here, into a
/// handler that keeps nothing. Throws YAML::Exception for a syntax error in
/// those two documents, as YAML::Load does for the first.
inline int second_document_line(const std::string& text) {
  struct Starts : YAML::EventHandler {
    int line = -1;  // 0-based, of the last document start
    void OnDocumentStart(const YAML::Mark& m) override { line = m.line; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  } starts;
  std::istringstream in(text);
  YAML::Parser parser(in);
  if (!parser.HandleNextDocument(starts)) return 0;
  if (!parser.HandleNextDocument(starts)) return 0;
  return starts.line >= 0 ? starts.line + 1 : 1;
}

}  // namespace fabricsim
