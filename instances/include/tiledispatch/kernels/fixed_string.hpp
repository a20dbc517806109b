// A fixed-capacity string that can be built in constant expressions, so that an instance string is a
// compile-time constant of its traits (DESIGN decision 3) and no std::string is involved.
#pragma once

#include <cstddef>
#include <string_view>

namespace tiledispatch::kernels {

template <std::size_t Capacity>
class FixedString {
 public:
  constexpr FixedString() = default;

  constexpr FixedString& append(std::string_view text) {
    for (char c : text) push(c);
    return *this;
  }

  constexpr FixedString& append(long long value) {
    if (value < 0) {
      push('-');
      value = -value;
    }
    char digits[20] = {};
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (count > 0) push(digits[--count]);
    return *this;
  }

  constexpr FixedString& append(int value) { return append(static_cast<long long>(value)); }
  constexpr FixedString& append(bool value) { return append(value ? std::string_view("1") : "0"); }

  constexpr std::string_view view() const { return std::string_view(data_, size_); }
  constexpr std::size_t size() const { return size_; }
  // True when an append did not fit: the string was truncated (a static_assert on it catches that).
  constexpr bool overflowed() const { return overflowed_; }

 private:
  constexpr void push(char c) {
    if (size_ < Capacity) {
      data_[size_++] = c;
    } else {
      overflowed_ = true;
    }
  }

  char data_[Capacity + 1] = {};
  std::size_t size_ = 0;
  bool overflowed_ = false;
};

// Comma-separated list builder: `list.field(x)` writes "," before every field but the first.
template <std::size_t Capacity>
class FieldList {
 public:
  template <class T>
  constexpr FieldList& field(T value) {
    if (!first_) text_.append(std::string_view(","));
    first_ = false;
    text_.append(value);
    return *this;
  }
  constexpr FixedString<Capacity>& text() { return text_; }
  constexpr const FixedString<Capacity>& text() const { return text_; }

 private:
  FixedString<Capacity> text_{};
  bool first_ = true;
};

}  // namespace tiledispatch::kernels
