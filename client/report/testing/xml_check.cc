#include "client/report/testing/xml_check.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace testing_util {
namespace {

class XmlChecker {
 public:
  explicit XmlChecker(absl::string_view text) : text_(text) {}

  absl::Status Check() {
    if (absl::StartsWith(text_, "<?xml")) {
      const size_t end = text_.find("?>");
      if (end == absl::string_view::npos) return Error("unterminated XML declaration");
      pos_ = end + 2;
    }
    SkipSpace();
    if (Rest().size() >= 9 && absl::EqualsIgnoreCase(Rest().substr(0, 9), "<!DOCTYPE")) {
      const size_t end = text_.find('>', pos_);
      if (end == absl::string_view::npos) return Error("unterminated DOCTYPE");
      pos_ = end + 1;
    }
    bool root_seen = false;
    while (pos_ < text_.size()) {
      if (absl::StartsWith(Rest(), "<!--")) {
        if (absl::Status s = Comment(); !s.ok()) return s;
      } else if (absl::StartsWith(Rest(), "</")) {
        if (absl::Status s = EndTag(); !s.ok()) return s;
      } else if (Rest()[0] == '<') {
        if (open_.empty() && root_seen) return Error("a second root element");
        root_seen = true;
        if (absl::Status s = StartTag(); !s.ok()) return s;
      } else {
        const size_t next = text_.find('<', pos_);
        const absl::string_view chars = text_.substr(
            pos_, next == absl::string_view::npos ? absl::string_view::npos : next - pos_);
        if (open_.empty() && !absl::StripAsciiWhitespace(chars).empty()) {
          return Error("text outside the root element");
        }
        if (absl::Status s = CheckCharacterData(chars); !s.ok()) return s;
        pos_ += chars.size();
      }
    }
    if (!open_.empty()) return Error(absl::StrCat("<", open_.back(), "> is never closed"));
    if (!root_seen) return Error("no root element");
    return absl::OkStatus();
  }

 private:
  absl::string_view Rest() const { return text_.substr(pos_); }

  absl::Status Error(const std::string& what) const {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }

  static bool NameStart(char c) { return absl::ascii_isalpha(c) || c == '_' || c == ':'; }
  static bool NameChar(char c) {
    return NameStart(c) || absl::ascii_isdigit(c) || c == '-' || c == '.';
  }

  std::string Name() {
    const size_t start = pos_;
    if (pos_ < text_.size() && NameStart(text_[pos_])) {
      ++pos_;
      while (pos_ < text_.size() && NameChar(text_[pos_])) ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  // '&' only as an entity, and no '<'.
  absl::Status CheckCharacterData(absl::string_view chars) const {
    for (size_t i = 0; i < chars.size(); ++i) {
      if (chars[i] == '<') return Error("'<' in character data");
      if (chars[i] != '&') continue;
      const size_t end = chars.find(';', i);
      if (end == absl::string_view::npos) return Error("'&' without ';'");
      const absl::string_view entity = chars.substr(i + 1, end - i - 1);
      bool valid = entity == "amp" || entity == "lt" || entity == "gt" || entity == "quot" ||
                   entity == "apos";
      if (!valid && entity.size() > 1 && entity[0] == '#') {
        valid = true;
        const bool hex = entity[1] == 'x';
        const absl::string_view digits = entity.substr(hex ? 2 : 1);
        if (digits.empty()) valid = false;
        for (const char c : digits) {
          valid = valid && (hex ? absl::ascii_isxdigit(c) : absl::ascii_isdigit(c));
        }
      }
      if (!valid) return Error(absl::StrCat("unknown entity '&", entity, ";'"));
      i = end;
    }
    return absl::OkStatus();
  }

  absl::Status Comment() {
    const size_t end = text_.find("-->", pos_ + 4);
    if (end == absl::string_view::npos) return Error("unterminated comment");
    pos_ = end + 3;
    return absl::OkStatus();
  }

  absl::Status EndTag() {
    pos_ += 2;
    const std::string name = Name();
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '>')
      return Error(absl::StrCat("bad end tag </", name));
    ++pos_;
    if (open_.empty()) return Error(absl::StrCat("</", name, "> closes nothing"));
    if (open_.back() != name) {
      return Error(absl::StrCat("</", name, "> closes <", open_.back(), ">"));
    }
    open_.pop_back();
    return absl::OkStatus();
  }

  absl::Status StartTag() {
    ++pos_;
    const std::string name = Name();
    if (name.empty()) return Error("'<' not followed by a tag name");
    std::set<std::string> attributes;
    while (true) {
      const size_t before = pos_;
      SkipSpace();
      if (pos_ >= text_.size()) return Error(absl::StrCat("unterminated tag <", name));
      if (absl::StartsWith(Rest(), "/>")) {
        pos_ += 2;
        return absl::OkStatus();
      }
      if (text_[pos_] == '>') {
        ++pos_;
        open_.push_back(name);
        return absl::OkStatus();
      }
      if (pos_ == before) return Error(absl::StrCat("no space before an attribute of <", name));
      const std::string attribute = Name();
      if (attribute.empty()) return Error(absl::StrCat("bad attribute in <", name));
      if (!attributes.insert(attribute).second) {
        return Error(absl::StrCat("attribute ", attribute, " twice in <", name));
      }
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '=') {
        return Error(absl::StrCat("attribute ", attribute, " of <", name, "> without a value"));
      }
      ++pos_;
      SkipSpace();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
        return Error(absl::StrCat("unquoted value of ", attribute, " in <", name));
      }
      const char quote = text_[pos_++];
      const size_t end = text_.find(quote, pos_);
      if (end == absl::string_view::npos) return Error("unterminated attribute value");
      if (absl::Status s = CheckCharacterData(text_.substr(pos_, end - pos_)); !s.ok()) return s;
      pos_ = end + 1;
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::vector<std::string> open_;
};

}  // namespace

absl::Status CheckWellFormedXml(absl::string_view text) { return XmlChecker(text).Check(); }

}  // namespace testing_util
}  // namespace pstrain
