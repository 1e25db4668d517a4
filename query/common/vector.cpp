#include "query/common/vector.h"

#include <cassert>

namespace argus::query {

void Vector::reset(LogicalType t, size_t n) {
  type = t;
  constant = false;
  validity.clear();
  dispatchPhysical(t, [&](auto tag) { data<decltype(tag)>().resize(n); });
}

void Vector::setConstant(const Value& v) {
  if (v.isNull()) {
    setConstantNull(v.type());
    return;
  }
  reset(v.type(), 1);
  constant = true;
  switch (v.type()) {
    case LogicalType::kBoolean: b8[0] = v.boolValue() ? 1 : 0; break;
    case LogicalType::kBigInt:
    case LogicalType::kId: i64[0] = v.bigintValue(); break;
    case LogicalType::kDouble: f64[0] = v.doubleValue(); break;
    case LogicalType::kVarchar: str[0] = v.stringValue(); break;
    case LogicalType::kHistogram:
    case LogicalType::kNull: assert(false && "BUG: no constants of this type"); break;
  }
}

void Vector::setConstantNull(LogicalType t) {
  reset(t, 1);
  constant = true;
  validity.assign(1, 0);
  dispatchPhysical(t, [&](auto tag) { data<decltype(tag)>()[0] = decltype(tag){}; });
}

void Vector::setNull(size_t i) {
  if (validity.empty()) validity.assign(physicalSize(), 1);
  validity[constant ? 0 : i] = 0;
}

size_t Vector::physicalSize() const {
  return dispatchPhysical(type, [&](auto tag) { return data<decltype(tag)>().size(); });
}

Value Vector::value(size_t i) const {
  size_t r = constant ? 0 : i;
  if (!isValid(r)) return Value::null(type);
  switch (type) {
    case LogicalType::kBoolean: return Value::boolean(b8[r] != 0);
    case LogicalType::kBigInt: return Value::bigint(i64[r]);
    case LogicalType::kId: return Value::id(static_cast<uint64_t>(i64[r]));
    case LogicalType::kDouble: return Value::dbl(f64[r]);
    case LogicalType::kVarchar: return Value::varchar(std::string(str[r]));
    case LogicalType::kHistogram:
    case LogicalType::kNull: break;
  }
  return Value::null(type);
}

void gather(const Vector& src, const uint32_t* sel, size_t n, Vector& out) {
  if (src.constant || sel == nullptr) {
    out = src;  // copies into out's existing buffers
    if (!src.constant) {
      // Only the first n rows are wanted.
      dispatchPhysical(src.type, [&](auto tag) { out.data<decltype(tag)>().resize(n); });
      if (!out.validity.empty()) out.validity.resize(n);
    }
    return;
  }
  out.type = src.type;
  out.constant = false;
  dispatchPhysical(src.type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = src.data<T>().data();
    auto& o = out.data<T>();
    o.resize(n);
    T* op = o.data();
    for (size_t i = 0; i < n; ++i) op[i] = in[sel[i]];
  });
  if (src.validity.empty()) {
    out.validity.clear();
  } else {
    out.validity.resize(n);
    const uint8_t* v = src.validity.data();
    for (size_t i = 0; i < n; ++i) out.validity[i] = v[sel[i]];
  }
}

void eraseFront(Vector& v, size_t n) {
  assert(!v.constant && "BUG: eraseFront needs a flat vector");
  dispatchPhysical(v.type, [&](auto tag) {
    auto& d = v.data<decltype(tag)>();
    d.erase(d.begin(), d.begin() + static_cast<ptrdiff_t>(std::min(n, d.size())));
  });
  if (!v.validity.empty()) v.validity.erase(v.validity.begin(), v.validity.begin() + static_cast<ptrdiff_t>(std::min(n, v.validity.size())));
}

void slice(const Vector& src, size_t offset, size_t n, Vector& out) {
  if (src.constant) {
    out = src;
    return;
  }
  out.type = src.type;
  out.constant = false;
  dispatchPhysical(src.type, [&](auto tag) {
    using T = decltype(tag);
    const auto& in = src.data<T>();
    out.data<T>().assign(in.begin() + static_cast<ptrdiff_t>(offset), in.begin() + static_cast<ptrdiff_t>(offset + n));
  });
  if (src.validity.empty()) {
    out.validity.clear();
  } else {
    out.validity.assign(src.validity.begin() + static_cast<ptrdiff_t>(offset), src.validity.begin() + static_cast<ptrdiff_t>(offset + n));
  }
}

void append(const Vector& src, const uint32_t* sel, size_t n, Vector& dst, Arena& arena) {
  assert(src.type == dst.type && !dst.constant && "BUG: append needs a flat vector of the same type");
  size_t base = dst.physicalSize();
  auto row = [&](size_t i) -> size_t { return src.constant ? 0 : (sel ? sel[i] : i); };
  dispatchPhysical(src.type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = src.data<T>().data();
    auto& o = dst.data<T>();
    if constexpr (std::is_arithmetic_v<T>) {
      if (!src.constant && !sel) {  // one copy (resize first zeroed what the loop wrote over)
        o.insert(o.end(), in, in + n);
        return;
      }
    }
    o.resize(base + n);
    T* op = o.data() + base;
    if constexpr (std::is_same_v<T, std::string_view>) {
      for (size_t i = 0; i < n; ++i) op[i] = arena.copy(in[row(i)]);
    } else if constexpr (std::is_same_v<T, const model::DurationHistogram*>) {
      for (size_t i = 0; i < n; ++i) {
        const model::DurationHistogram* h = in[row(i)];
        op[i] = h ? arena.copy(*h) : nullptr;
      }
    } else if (src.constant) {
      for (size_t i = 0; i < n; ++i) op[i] = in[0];
    } else if (sel) {
      for (size_t i = 0; i < n; ++i) op[i] = in[sel[i]];
    } else {
      for (size_t i = 0; i < n; ++i) op[i] = in[i];
    }
  });
  if (src.validity.empty()) {
    if (!dst.validity.empty()) dst.validity.resize(base + n, 1);
    return;
  }
  if (dst.validity.empty()) dst.validity.assign(base, 1);
  dst.validity.resize(base + n);
  for (size_t i = 0; i < n; ++i) dst.validity[base + i] = src.validity[row(i)];
}

size_t memoryBytes(const Vector& v) {
  return v.i64.capacity() * 8 + v.f64.capacity() * 8 + v.b8.capacity() + v.str.capacity() * sizeof(std::string_view) +
         v.hist.capacity() * sizeof(void*) + v.validity.capacity();
}

}  // namespace argus::query
