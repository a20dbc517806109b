#pragma once
template <int N> struct Beta {};
