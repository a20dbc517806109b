#pragma once
template <int N> struct Alpha {};
