// The aggregates: count, sum, avg, min, max, the variance family, median, quantiles and mad
// (exact, over the values kept per group), argmin/argmax, hist_merge; and the DISTINCT wrapper. Each state
// keeps one typed array per field, indexed by group, and updates it in a loop per chunk.
#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>

#include "base/cpu_clones.h"
#include "base/worker_threads.h"
#include "query/function/function_registry.h"
#include "query/function/exact_sum.h"
#include "query/function/kept_values.h"
#include "query/function/select_nth.h"

namespace argus::query {

namespace {

using L = LogicalType;

// Calls fn(i, group) for every row i whose argument is not NULL.
template <typename Fn>
inline void forValid(const Vector& v, const uint32_t* groups, size_t n, Fn&& fn) {
  if (v.constant) {
    if (!v.isValid(0)) return;
    for (size_t i = 0; i < n; ++i) fn(i, groups ? groups[i] : 0u);
  } else if (v.validity.empty()) {
    if (groups) {
      for (size_t i = 0; i < n; ++i) fn(i, groups[i]);
    } else {
      for (size_t i = 0; i < n; ++i) fn(i, 0u);
    }
  } else {
    const uint8_t* valid = v.validity.data();
    for (size_t i = 0; i < n; ++i) {
      if (valid[i]) fn(i, groups ? groups[i] : 0u);
    }
  }
}

// A dense argument: no NULLs, not constant (what the states' run folds read).
inline bool dense(const Vector& v) { return !v.constant && v.validity.empty(); }

// Calls fold(group, first, last) for each run of rows [first, last) of one group.
template <typename Fold>
inline void forRuns(const GroupRuns& runs, Fold&& fold) {
  for (size_t r = 0; r < runs.count; ++r) fold(runs.groups[r], size_t{runs.starts[r]}, size_t{runs.starts[r + 1]});
}

class CountState final : public AggregateState {
 public:
  explicit CountState(bool star) : star_(star) {}
  void resize(size_t g) override { counts_.resize(g, 0); }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    if (star_ || (args[0]->allValid() && !args[0]->constant)) {
      if (!groups) {
        counts_[0] += static_cast<int64_t>(n);
      } else {
        int64_t* c = counts_.data();
        for (size_t i = 0; i < n; ++i) ++c[groups[i]];
      }
      return;
    }
    forValid(*args[0], groups, n, [&](size_t, uint32_t g) { ++counts_[g]; });
  }
  bool foldsRuns(const Vector* const* args) const override { return star_ || dense(*args[0]); }
  void updateRuns(const Vector* const*, const GroupRuns& runs) override {
    forRuns(runs, [&](uint32_t g, size_t first, size_t last) { counts_[g] += static_cast<int64_t>(last - first); });
  }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(L::kBigInt, g);
    std::copy(counts_.begin(), counts_.begin() + g, out.i64.begin());
  }
  size_t memoryBytes() const override { return counts_.capacity() * 8; }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    const auto& o = static_cast<const CountState&>(other);
    for (size_t g = 0; g < groups; ++g) counts_[into[g]] += o.counts_[g];
  }

 private:
  bool star_;
  std::vector<int64_t> counts_;
};

// sum / min / max share the "value plus seen flag" layout.
template <typename T>
class ValueState : public AggregateState {
 public:
  void resize(size_t g) override {
    values_.resize(g, T{});
    seen_.resize(g, 0);
  }
  size_t memoryBytes() const override { return values_.capacity() * sizeof(T) + seen_.capacity(); }
  // merge() for these states: combine(&mine, theirs) where both groups have a value.
  template <typename Combine>
  void mergeValues(const ValueState& o, const uint32_t* into, size_t groups, Combine&& combine) {
    for (size_t g = 0; g < groups; ++g) {
      if (!o.seen_[g]) continue;
      const uint32_t d = into[g];
      if (seen_[d]) {
        combine(&values_[d], o.values_[g]);
      } else {
        values_[d] = o.values_[g];
        seen_[d] = 1;
      }
    }
  }
  void finalizeAs(size_t g, Vector& out, L type) {
    out.reset(type, g);
    auto& o = out.data<T>();
    for (size_t i = 0; i < g; ++i) {
      o[i] = seen_[i] ? values_[i] : T{};
      if (!seen_[i]) out.setNull(i);
    }
  }

 protected:
  std::vector<T> values_;
  std::vector<uint8_t> seen_;
};

class SumBigintState final : public ValueState<int64_t> {
 public:
  explicit SumBigintState(const AggregateParams& p) : pos_(p.pos) {}
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    bool overflow = false;
    if (!groups && !v.constant && v.validity.empty()) {
      // One group, no NULLs (sum over a whole scan): keep the running sum in a register.
      int64_t sum = values_[0];
      const int64_t* x = v.i64.data();
      for (size_t i = 0; i < n; ++i) overflow |= __builtin_add_overflow(sum, x[i], &sum);
      values_[0] = sum;
      if (n > 0) seen_[0] = 1;
    } else {
      forValid(v, groups, n, [&](size_t i, uint32_t g) {
        overflow |= __builtin_add_overflow(values_[g], at<int64_t>(v, i), &values_[g]);
        seen_[g] = 1;
      });
    }
    if (overflow) throw ExecutionError(pos_, kOverflowHint);
  }
  bool foldsRuns(const Vector* const* args) const override { return dense(*args[0]); }
  void updateRuns(const Vector* const* args, const GroupRuns& runs) override {
    bool overflow = false;
    const int64_t* x = args[0]->i64.data();
    forRuns(runs, [&](uint32_t g, size_t first, size_t last) {
      int64_t sum = values_[g];
      for (size_t i = first; i < last; ++i) overflow |= __builtin_add_overflow(sum, x[i], &sum);
      values_[g] = sum;
      seen_[g] = 1;
    });
    if (overflow) throw ExecutionError(pos_, kOverflowHint);
  }
  void finalize(size_t g, Vector& out, Arena&) override { finalizeAs(g, out, L::kBigInt); }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    bool overflow = false;
    mergeValues(static_cast<const SumBigintState&>(other), into, groups,
                [&](int64_t* mine, int64_t theirs) { overflow |= __builtin_add_overflow(*mine, theirs, mine); });
    if (overflow) throw ExecutionError(pos_, kOverflowHint);
  }

 private:
  static constexpr const char* kOverflowHint = "BIGINT overflow in sum(); sum a DOUBLE instead (CAST(x AS DOUBLE))";
  SourcePos pos_;
};

class SumDoubleState final : public ValueState<double> {
 public:
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      values_[g] += at<double>(v, i);
      seen_[g] = 1;
    });
  }
  bool foldsRuns(const Vector* const* args) const override { return dense(*args[0]); }
  void updateRuns(const Vector* const* args, const GroupRuns& runs) override {
    const double* x = args[0]->f64.data();
    forRuns(runs, [&](uint32_t g, size_t first, size_t last) {
      double sum = values_[g];  // the rows' order, as update adds them
      for (size_t i = first; i < last; ++i) sum += x[i];
      values_[g] = sum;
      seen_[g] = 1;
    });
  }
  void finalize(size_t g, Vector& out, Arena&) override { finalizeAs(g, out, L::kDouble); }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    mergeValues(static_cast<const SumDoubleState&>(other), into, groups, [](double* mine, double theirs) { *mine += theirs; });
  }
};

// Ordering for min/max: IDs unsigned, NaN greatest.
template <typename T>
inline bool less(const T& a, const T& b, L type) {
  if constexpr (std::is_same_v<T, double>) {
    if (std::isnan(a)) return false;
    return std::isnan(b) || a < b;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return type == L::kId ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
  } else {
    return a < b;
  }
}

template <typename T, bool kMax>
class MinMaxState final : public ValueState<T> {
 public:
  explicit MinMaxState(L type) : type_(type), identity_(identity(type)) {}
  // Values start at the order's far end, so a group's first row needs no test of its own.
  void resize(size_t g) override {
    this->values_.resize(g, identity_);
    this->seen_.resize(g, 0);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    if (groups && !v.constant && v.validity.empty()) {
      // The usual case (GROUP BY, no NULLs) as a plain loop over local pointers, the order
      // resolved once: through forValid, the type test and the vectors' reloads after each
      // byte store cost ~20 instructions a row (a per-step max over 10 M rows).
      const T* x = v.data<T>().data();
      if (type_ == L::kId) {
        updatePlain(x, groups, n, [](const T& a, const T& b) { return less(a, b, L::kId); });
      } else {
        updatePlain(x, groups, n, [](const T& a, const T& b) { return less(a, b, L::kBigInt); });
      }
      return;
    }
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      const T& x = at<T>(v, i);
      if (!this->seen_[g] || (kMax ? less(this->values_[g], x, type_) : less(x, this->values_[g], type_))) {
        this->values_[g] = x;
        this->seen_[g] = 1;
      }
    });
  }
  void finalize(size_t g, Vector& out, Arena&) override { this->finalizeAs(g, out, type_); }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    this->mergeValues(static_cast<const MinMaxState&>(other), into, groups, [&](T* mine, const T& theirs) {
      if (kMax ? less(*mine, theirs, type_) : less(theirs, *mine, type_)) *mine = theirs;
    });
  }
  std::unique_ptr<AggregateState> readingFrom(AggregateState& owner) const override;  // after KeptValuesState

 private:
  template <typename Less>
  void updatePlain(const T* x, const uint32_t* groups, size_t n, Less lt) {
    T* const values = this->values_.data();
    uint8_t* const seen = this->seen_.data();
    // Selects and unconditional stores, no branch: whether a row sets its group's value
    // is data (rows in rank order alternate groups), and a branch on it mispredicted. An
    // unseen group holds the identity, which every value replaces or equals.
    for (size_t i = 0; i < n; ++i) {
      const uint32_t g = groups[i];
      const T cur = values[g];
      values[g] = (kMax ? lt(cur, x[i]) : lt(x[i], cur)) ? x[i] : cur;
      seen[g] = 1;
    }
  }

  // The value no other orders past (less() above: IDs unsigned, NaN greatest).
  static T identity(L type) {
    if constexpr (std::is_same_v<T, double>) {
      return kMax ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (type == L::kId) return kMax ? 0 : -1;  // 0 and 2^64-1 unsigned
      return kMax ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }

  L type_;
  T identity_;
};

// Strings: the state owns its bytes (a chunk's strings die with the chunk).
template <bool kMax>
class MinMaxStringState final : public AggregateState {
 public:
  void resize(size_t g) override {
    values_.resize(g);
    seen_.resize(g, 0);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      std::string_view x = at<std::string_view>(v, i);
      if (!seen_[g] || (kMax ? std::string_view(values_[g]) < x : x < std::string_view(values_[g]))) {
        bytes_ += x.size() > values_[g].capacity() ? x.size() : 0;
        values_[g].assign(x);
        seen_[g] = 1;
      }
    });
  }
  void finalize(size_t g, Vector& out, Arena& arena) override {
    out.reset(L::kVarchar, g);
    for (size_t i = 0; i < g; ++i) {
      out.str[i] = arena.copy(values_[i]);
      if (!seen_[i]) out.setNull(i);
    }
  }
  size_t memoryBytes() const override { return values_.capacity() * sizeof(std::string) + seen_.capacity() + bytes_; }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    auto& o = static_cast<MinMaxStringState&>(other);
    for (size_t g = 0; g < groups; ++g) {
      if (!o.seen_[g]) continue;
      const uint32_t d = into[g];
      if (!seen_[d] || (kMax ? values_[d] < o.values_[g] : o.values_[g] < values_[d])) {
        values_[d].swap(o.values_[g]);
        seen_[d] = 1;
      }
    }
    bytes_ += o.bytes_;  // at most: the strings swapped in, and the buffers swapped out
  }

 private:
  std::vector<std::string> values_;
  std::vector<uint8_t> seen_;
  size_t bytes_ = 0;
};

class AvgState final : public AggregateState {
 public:
  explicit AvgState(L type) : type_(type) {}
  void resize(size_t g) override {
    isums_.resize(g, 0);
    dsums_.resize(g, 0);
    counts_.resize(g, 0);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    if (type_ == L::kBigInt) {
      // Exact: 128-bit sums cannot overflow for 2^64 rows of int64.
      forValid(v, groups, n, [&](size_t i, uint32_t g) {
        isums_[g] += at<int64_t>(v, i);
        ++counts_[g];
      });
    } else {
      forValid(v, groups, n, [&](size_t i, uint32_t g) {
        dsums_[g] += at<double>(v, i);
        ++counts_[g];
      });
    }
  }
  bool foldsRuns(const Vector* const* args) const override { return dense(*args[0]); }
  void updateRuns(const Vector* const* args, const GroupRuns& runs) override {
    const int64_t* xi = args[0]->i64.data();
    const double* xd = args[0]->f64.data();
    forRuns(runs, [&](uint32_t g, size_t first, size_t last) {
      if (type_ == L::kBigInt) {
        isums_[g] += exactSum(xi + first, last - first);
      } else {
        double sum = dsums_[g];  // the rows' order, as update adds them
        for (size_t i = first; i < last; ++i) sum += xd[i];
        dsums_[g] = sum;
      }
      counts_[g] += static_cast<int64_t>(last - first);
    });
  }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(L::kDouble, g);
    for (size_t i = 0; i < g; ++i) {
      if (counts_[i] == 0) {
        out.f64[i] = 0;
        out.setNull(i);
      } else if (type_ == L::kBigInt) {
        out.f64[i] = static_cast<double>(isums_[i]) / static_cast<double>(counts_[i]);
      } else {
        out.f64[i] = dsums_[i] / static_cast<double>(counts_[i]);
      }
    }
  }
  size_t memoryBytes() const override { return isums_.capacity() * 16 + dsums_.capacity() * 8 + counts_.capacity() * 8; }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    const auto& o = static_cast<const AvgState&>(other);
    for (size_t g = 0; g < groups; ++g) {
      isums_[into[g]] += o.isums_[g];
      dsums_[into[g]] += o.dsums_[g];
      counts_[into[g]] += o.counts_[g];
    }
  }

 private:
  L type_;
  std::vector<__int128> isums_;
  std::vector<double> dsums_;
  std::vector<int64_t> counts_;
};

// Welford's algorithm per group: numerically stable mean and sum of squared deviations.
class VarianceState final : public AggregateState {
 public:
  VarianceState(L type, bool sample, bool root) : type_(type), sample_(sample), root_(root) {}
  void resize(size_t g) override {
    n_.resize(g, 0);
    mean_.resize(g, 0);
    m2_.resize(g, 0);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      double x = type_ == L::kBigInt ? static_cast<double>(at<int64_t>(v, i)) : at<double>(v, i);
      double count = static_cast<double>(++n_[g]);
      double d = x - mean_[g];
      mean_[g] += d / count;
      m2_[g] += d * (x - mean_[g]);
    });
  }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(L::kDouble, g);
    for (size_t i = 0; i < g; ++i) {
      int64_t need = sample_ ? 2 : 1;
      if (n_[i] < need) {
        out.f64[i] = 0;
        out.setNull(i);
        continue;
      }
      double var = m2_[i] / static_cast<double>(sample_ ? n_[i] - 1 : n_[i]);
      if (var < 0) var = 0;
      out.f64[i] = root_ ? std::sqrt(var) : var;
    }
  }
  size_t memoryBytes() const override { return n_.capacity() * 24; }
  // Chan, Golub and LeVeque's pairwise update of the mean and the squared deviations.
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    const auto& o = static_cast<const VarianceState&>(other);
    for (size_t g = 0; g < groups; ++g) {
      if (o.n_[g] == 0) continue;
      const uint32_t d = into[g];
      const double na = static_cast<double>(n_[d]), nb = static_cast<double>(o.n_[g]), n = na + nb;
      const double delta = o.mean_[g] - mean_[d];
      mean_[d] += delta * nb / n;
      m2_[d] += o.m2_[g] + delta * delta * na * nb / n;
      n_[d] += o.n_[g];
    }
  }

 private:
  L type_;
  bool sample_, root_;
  std::vector<int64_t> n_;
  std::vector<double> mean_, m2_;
};

// Threads for a finalize over kept values: one per core (at most 8) once the groups hold
// a million values between them, else one. Each group is one thread's.
size_t finalizeThreads(size_t groups, size_t values) { return values >= (size_t{1} << 20) ? std::min<size_t>(groups, defaultWorkerThreads()) : 1; }

// Keeps every non-NULL value per group (8 bytes each, counted against the memory cap) for
// the aggregates that select among them at finalize.
template <typename T>
class KeptValuesState : public AggregateState {
 public:
  void resize(size_t g) override {
    if (owner_ == nullptr) values_.resize(g);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    if (groups && !v.constant && v.validity.empty()) {
      // The usual case (GROUP BY, no NULLs) as a plain loop: through forValid the per-row
      // lambda was not inlined, a call per row (a fifth of per-step median's time).
      const T* x = v.data<T>().data();
      values_.appendAll(groups, x, n);
      return;
    }
    forValid(v, groups, n, [&](size_t i, uint32_t g) { values_.append(g, at<T>(v, i)); });
  }
  size_t memoryBytes() const override { return values_.memoryBytes() + scratch_.capacity() * sizeof(T); }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    values_.mergeFrom(static_cast<KeptValuesState&>(other).values_, into, groups);
  }
  bool keepsValues() const override { return owner_ == nullptr; }
  // The values this state answers from: its own, or its owner's when it reads them.
  const KeptValues<T>& kept() const { return owner_ == nullptr ? values_ : owner_->values_; }

 protected:
  // The k-th smallest of vals (reordered) and, when want_next, the one after it (the k-th
  // again when k is the last rank). Integers go through the radix select.
  template <typename U>
  static std::pair<U, U> nthAndNext(std::vector<U>& vals, size_t k, bool want_next) {
    if constexpr (std::is_same_v<U, int64_t>) {
      const NthPair p = selectNth(vals, k);
      return {p.nth, p.next};
    } else {
      auto by = [](const U& a, const U& b) { return less(a, b, L::kBigInt); };
      std::nth_element(vals.begin(), vals.begin() + static_cast<ptrdiff_t>(k), vals.end(), by);
      if (!want_next || k + 1 >= vals.size()) return {vals[k], vals[k]};
      return {vals[k], *std::min_element(vals.begin() + static_cast<ptrdiff_t>(k) + 1, vals.end(), by)};
    }
  }
  // The continuous quantile q of vals (reordered), interpolated between the two nearest ranks.
  template <typename U>
  static double quantileCont(std::vector<U>& vals, double q) {
    const double pos = q * static_cast<double>(vals.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const double frac = pos - static_cast<double>(lo);
    const auto [lo_v, hi_v] = nthAndNext(vals, lo, frac != 0);
    if (frac == 0) return static_cast<double>(lo_v);
    return static_cast<double>(lo_v) + (static_cast<double>(hi_v) - static_cast<double>(lo_v)) * frac;
  }

  // Calls empty(i) for each of the first g groups without values, then fn(i, values) for
  // each of the others (values: a buffer of the group's, reordered freely). With much to
  // select from, fn runs on one thread per core (at most 8), each group on one: fn may
  // write only its group's output.
  template <typename Empty, typename Fn>
  void forEachGroup(size_t g, Empty&& empty, Fn&& fn) {
    const KeptValues<T>& values = kept();
    size_t total = 0;
    for (size_t i = 0; i < g; ++i) {
      if (values.count(i) == 0) empty(i);
      total += values.count(i);
    }
    auto work = [&](size_t first, size_t stride, std::vector<T>& scratch) {
      for (size_t i = first; i < g; i += stride) {
        if (values.count(i) == 0) continue;
        values.gather(i, &scratch);
        fn(i, scratch);
      }
    };
    const size_t threads = finalizeThreads(g, total);
    std::vector<std::vector<T>> scratch(threads);  // the caller's thread uses scratch_
    runOnThreads(threads, [&](size_t t) { work(t, threads, t == 0 ? scratch_ : scratch[t]); });
  }

  // `fresh` (a new state of the caller's aggregate) reading owner's values
  // (AggregateState::readingFrom); null when owner keeps values of another type.
  static std::unique_ptr<AggregateState> reader(std::unique_ptr<KeptValuesState> fresh, AggregateState& owner) {
    auto* from = dynamic_cast<KeptValuesState*>(&owner);
    if (from == nullptr || !from->keepsValues()) return nullptr;
    fresh->owner_ = from;
    return fresh;
  }

 private:
  KeptValues<T> values_;  // empty in a reader
  const KeptValuesState* owner_ = nullptr;
  std::vector<T> scratch_;
};

// The greatest (max) or least of best and x[0, n): eight values a step in 4-lane vectors
// (~1 instruction a value with AVX2, where a scalar select loop took 6).
ARGUS_AVX2_CLONES int64_t extremeOf(const int64_t* x, size_t n, int64_t best, bool max) {
  using Lanes = int64_t __attribute__((vector_size(32)));
  size_t i = 0;
  if (n >= 8) {
    Lanes a, b;
    std::memcpy(&a, x, sizeof a);
    std::memcpy(&b, x + 4, sizeof b);
    for (i = 8; i + 8 <= n; i += 8) {
      Lanes c, d;
      std::memcpy(&c, x + i, sizeof c);
      std::memcpy(&d, x + i + 4, sizeof d);
      a = (max ? c > a : c < a) ? c : a;
      b = (max ? d > b : d < b) ? d : b;
    }
    a = (max ? b > a : b < a) ? b : a;
    for (int l = 0; l < 4; ++l) best = max ? std::max(best, a[l]) : std::min(best, a[l]);
  }
  for (; i < n; ++i) best = max ? std::max(best, x[i]) : std::min(best, x[i]);
  return best;
}

// min / max read from the values a median, quantile or mad over the same argument keeps:
// a pass over each group's values at the end instead of an update per row.
template <typename T, bool kMax>
class KeptExtremeState final : public AggregateState {
 public:
  KeptExtremeState(L type, const KeptValuesState<T>& owner) : type_(type), owner_(owner) {}
  void resize(size_t) override {}
  void update(const Vector* const*, const uint32_t*, size_t) override {}
  void merge(AggregateState&, const uint32_t*, size_t) override {}
  size_t memoryBytes() const override { return 0; }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(type_, g);
    T* const o = out.data<T>().data();
    const KeptValues<T>& kept = owner_.kept();
    std::vector<uint8_t> seen(g, 0);
    size_t total = 0;
    for (size_t i = 0; i < g; ++i) total += kept.count(i);
    const size_t threads = finalizeThreads(g, total);
    runOnThreads(threads, [&](size_t first) {
      for (size_t i = first; i < g; i += threads) {
        kept.forEachRun(i, [&](const T* x, const T* end) {
          if (x == end) return;
          T best = seen[i] ? o[i] : *x;
          if constexpr (std::is_same_v<T, int64_t>) {
            best = extremeOf(x, static_cast<size_t>(end - x), best, kMax);  // no IDs here: no quantile takes them
          } else {
            // NaN greatest; the first of equal values (-0.0, 0.0) stays, as in MinMaxState.
            for (; x != end; ++x) best = (kMax ? less(best, *x, type_) : less(*x, best, type_)) ? *x : best;
          }
          o[i] = best;
          seen[i] = 1;
        });
      }
    });
    for (size_t i = 0; i < g; ++i) {
      if (!seen[i]) out.setNull(i);
    }
  }

 private:
  L type_;
  const KeptValuesState<T>& owner_;
};

template <typename T, bool kMax>
std::unique_ptr<AggregateState> MinMaxState<T, kMax>::readingFrom(AggregateState& owner) const {
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
    auto* from = dynamic_cast<KeptValuesState<T>*>(&owner);
    if (from != nullptr && from->keepsValues() && type_ != L::kId) return std::make_unique<KeptExtremeState<T, kMax>>(type_, *from);
  }
  return nullptr;
}

// Exact quantiles over the kept values. Continuous: linear interpolation between the two
// nearest ranks (quantile_cont, median). Discrete: the value at rank ceil(q * n) - 1.
template <typename T>
class QuantileState final : public KeptValuesState<T> {
 public:
  QuantileState(L type, double q, bool discrete) : type_(type), q_(q), discrete_(discrete) {}
  std::unique_ptr<AggregateState> readingFrom(AggregateState& owner) const override {
    return this->reader(std::make_unique<QuantileState>(type_, q_, discrete_), owner);
  }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(discrete_ ? type_ : L::kDouble, g);
    auto empty = [&](size_t i) {
      out.setNull(i);
      if (discrete_) {
        out.data<T>()[i] = T{};
      } else {
        out.f64[i] = 0;
      }
    };
    this->forEachGroup(g, empty, [&](size_t i, std::vector<T>& vals) {
      if (discrete_) {
        size_t k = static_cast<size_t>(std::ceil(q_ * static_cast<double>(vals.size())));
        k = k == 0 ? 0 : k - 1;
        out.data<T>()[i] = this->nthAndNext(vals, k, false).first;
        return;
      }
      out.f64[i] = this->quantileCont(vals, q_);
    });
  }

 private:
  L type_;
  double q_;
  bool discrete_;
};

// mad(x): the median absolute deviation, median(|x - median(x)|), unscaled (as the window
// function mad computes it over a frame).
template <typename T>
class MadState final : public KeptValuesState<T> {
 public:
  std::unique_ptr<AggregateState> readingFrom(AggregateState& owner) const override { return this->reader(std::make_unique<MadState>(), owner); }
  void finalize(size_t g, Vector& out, Arena&) override {
    out.reset(L::kDouble, g);
    auto empty = [&](size_t i) {
      out.setNull(i);
      out.f64[i] = 0;
    };
    this->forEachGroup(g, empty, [&](size_t i, std::vector<T>& vals) {
      const double m = this->quantileCont(vals, 0.5);
      thread_local std::vector<double> deviations;
      deviations.clear();
      for (const T& v : vals) deviations.push_back(std::fabs(static_cast<double>(v) - m));
      out.f64[i] = this->quantileCont(deviations, 0.5);
      // A large group's buffer is not kept: this may run on a worker thread that lives on.
      if (deviations.capacity() > (size_t{1} << 20)) std::vector<double>().swap(deviations);
    });
  }
};

// argmin(arg, val) / argmax(arg, val): arg of the row with the least / greatest val. Rows
// whose val is NULL are skipped; the first row wins a tie; a NULL arg on that row gives NULL.
template <typename A, typename V, bool kMax>
class ArgExtremeState final : public AggregateState {
  using Stored = std::conditional_t<std::is_same_v<A, std::string_view>, std::string, A>;

 public:
  ArgExtremeState(L arg_type, L val_type) : arg_type_(arg_type), val_type_(val_type) {}
  void resize(size_t g) override {
    args_.resize(g);
    arg_valid_.resize(g, 0);
    vals_.resize(g, V{});
    seen_.resize(g, 0);
  }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& a = *args[0];
    const Vector& v = *args[1];
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      const V& x = at<V>(v, i);
      if (seen_[g] && !(kMax ? less(vals_[g], x, val_type_) : less(x, vals_[g], val_type_))) return;
      vals_[g] = x;
      seen_[g] = 1;
      arg_valid_[g] = a.isValid(i);
      if (!arg_valid_[g]) return;
      if constexpr (std::is_same_v<A, std::string_view>) {
        std::string_view text = at<A>(a, i);
        bytes_ += text.size() > args_[g].capacity() ? text.size() : 0;
        args_[g].assign(text);
      } else {
        args_[g] = at<A>(a, i);
      }
    });
  }
  void finalize(size_t g, Vector& out, Arena& arena) override {
    out.reset(arg_type_, g);
    auto& o = out.data<A>();
    for (size_t i = 0; i < g; ++i) {
      if (!seen_[i] || !arg_valid_[i]) {
        out.setNull(i);
        continue;
      }
      if constexpr (std::is_same_v<A, std::string_view>) {
        o[i] = arena.copy(args_[i]);
      } else {
        o[i] = args_[i];
      }
    }
  }
  size_t memoryBytes() const override {
    return args_.capacity() * sizeof(Stored) + vals_.capacity() * sizeof(V) + arg_valid_.capacity() + seen_.capacity() + bytes_;
  }
  bool mergeable() const override { return false; }
  void merge(AggregateState&, const uint32_t*, size_t) override { throw ExecutionError("argmin/argmax states do not merge"); }

 private:
  L arg_type_, val_type_;
  std::vector<Stored> args_;
  std::vector<uint8_t> arg_valid_;
  std::vector<V> vals_;
  std::vector<uint8_t> seen_;
  size_t bytes_ = 0;
};

// hist_merge(h). A group's rows usually come one after another (a scan yields rank by
// rank, step by step): their bucket counts are summed into a dense array indexed by bucket
// and merged into the group's histogram once, when a row of another group comes or at
// finalize, rather than by one sparse merge per row. Counts saturate as merge's do: the
// sums are exact, and min(sum, UINT32_MAX) is what saturating each addition gives.
class HistMergeState final : public AggregateState {
 public:
  using Bucket = model::DurationHistogram::Bucket;
  void resize(size_t g) override { hists_.resize(g); seen_.resize(g, 0); }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    if (run_.empty()) run_.assign(model::DurationHistogram::kMaxIndex + 1, 0);
    uint64_t* const run = run_.data();
    // The run's state in locals and the row inlined (a call per row, with the state stored
    // back each time, was half of this function's cost); a new group is the rare case.
    int32_t lo = run_lo_, hi = run_hi_;
    uint32_t group = run_group_;
    forValid(v, groups, n, [&](size_t i, uint32_t g) __attribute__((always_inline)) {
      if (g != group) [[unlikely]] {
        run_lo_ = lo;
        run_hi_ = hi;
        startRun(g);
        lo = run_lo_;
        hi = run_hi_;
        group = g;
      }
      const std::vector<Bucket>& buckets = at<const model::DurationHistogram*>(v, i)->buckets();
      if (buckets.empty()) return;
      lo = std::min(lo, buckets.front().index);  // indexes ascend
      hi = std::max(hi, buckets.back().index);
      for (const Bucket& b : buckets) run[static_cast<size_t>(b.index)] += b.count;
    });
    run_lo_ = lo;
    run_hi_ = hi;
  }
  void finalize(size_t g, Vector& out, Arena& arena) override {
    flushRun();
    out.reset(L::kHistogram, g);
    for (size_t i = 0; i < g; ++i) {
      out.hist[i] = arena.copy(hists_[i]);
      if (!seen_[i]) out.setNull(i);
    }
  }
  size_t memoryBytes() const override {
    return hists_.capacity() * sizeof(model::DurationHistogram) + seen_.capacity() + run_.size() * sizeof(uint64_t) + bytes_;
  }
  void merge(AggregateState& other, const uint32_t* into, size_t groups) override {
    auto& o = static_cast<HistMergeState&>(other);
    o.flushRun();
    flushRun();
    run_group_ = kNoGroup;
    for (size_t g = 0; g < groups; ++g) {
      if (!o.seen_[g]) continue;
      const uint32_t d = into[g];
      model::DurationHistogram& h = hists_[d];
      if (!seen_[d]) {
        seen_[d] = 1;
        std::swap(h, o.hists_[g]);
        bytes_ += h.buckets().size() * sizeof(Bucket);
        continue;
      }
      const size_t before = h.buckets().size();
      h.merge(o.hists_[g]);
      bytes_ += (h.buckets().size() - before) * sizeof(Bucket);
    }
  }

 private:
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  [[gnu::noinline]] void startRun(uint32_t g) {
    flushRun();
    run_group_ = g;
    seen_[g] = 1;
  }
  void flushRun() {
    if (run_group_ == kNoGroup || run_lo_ > run_hi_) return;
    run_hist_.refill([&](std::vector<Bucket>& out) {
      for (int32_t i = run_lo_; i <= run_hi_; ++i) {
        uint64_t& c = run_[static_cast<size_t>(i)];
        if (c == 0) continue;
        out.push_back(Bucket{i, static_cast<uint32_t>(std::min<uint64_t>(c, UINT32_MAX))});
        c = 0;
      }
      return true;
    });
    run_lo_ = model::DurationHistogram::kMaxIndex + 1;
    run_hi_ = -1;
    model::DurationHistogram& h = hists_[run_group_];
    const size_t before = h.buckets().size();
    h.merge(run_hist_);
    bytes_ += (h.buckets().size() - before) * sizeof(Bucket);
  }

  std::vector<model::DurationHistogram> hists_;
  std::vector<uint8_t> seen_;
  size_t bytes_ = 0;
  // The run of rows of run_group_ not yet merged: counts per bucket index in [run_lo_, run_hi_].
  std::vector<uint64_t> run_;  // allocated at the first update
  uint32_t run_group_ = kNoGroup;
  int32_t run_lo_ = model::DurationHistogram::kMaxIndex + 1;
  int32_t run_hi_ = -1;
  model::DurationHistogram run_hist_;  // the run's buckets, merged into the group's
};

// agg(DISTINCT x): passes on only the first occurrence of each (group, value).
class DistinctState final : public AggregateState {
 public:
  DistinctState(std::unique_ptr<AggregateState> inner, L type) : inner_(std::move(inner)), type_(type) {}
  void resize(size_t g) override { inner_->resize(g); }
  void update(const Vector* const* args, const uint32_t* groups, size_t n) override {
    const Vector& v = *args[0];
    rows_.clear();
    group_sel_.clear();
    forValid(v, groups, n, [&](size_t i, uint32_t g) {
      bool fresh;
      if (type_ == L::kVarchar) {
        fresh = strings_.emplace(g, std::string(at<std::string_view>(v, i))).second;
      } else {
        fresh = fixed_.insert((static_cast<unsigned __int128>(g) << 64) | codeOf(v, i)).second;
      }
      if (fresh) {
        rows_.push_back(static_cast<uint32_t>(i));
        group_sel_.push_back(g);
      }
    });
    if (rows_.empty()) return;
    gather(v, rows_.data(), rows_.size(), scratch_);
    const Vector* inner_args[1] = {&scratch_};
    inner_->update(inner_args, group_sel_.data(), rows_.size());
  }
  void finalize(size_t g, Vector& out, Arena& arena) override { inner_->finalize(g, out, arena); }
  size_t memoryBytes() const override { return inner_->memoryBytes() + fixed_.size() * 48 + strings_.size() * 64; }
  // Parts would each pass on their first occurrence of a value: merged, it would count twice.
  bool mergeable() const override { return false; }
  void merge(AggregateState&, const uint32_t*, size_t) override { throw ExecutionError("DISTINCT aggregate states do not merge"); }

 private:
  uint64_t codeOf(const Vector& v, size_t i) const {
    switch (type_) {
      case L::kDouble: {
        double d = at<double>(v, i);
        if (d == 0) d = 0;                  // -0.0 and 0.0 are one value
        if (std::isnan(d)) d = std::nan("");  // every NaN is one value
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        return bits;
      }
      case L::kBoolean: return at<uint8_t>(v, i);
      default: return static_cast<uint64_t>(at<int64_t>(v, i));
    }
  }
  struct Hash128 {
    size_t operator()(unsigned __int128 k) const {
      uint64_t lo = static_cast<uint64_t>(k), hi = static_cast<uint64_t>(k >> 64);
      return static_cast<size_t>((lo ^ (hi * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull);
    }
  };
  std::unique_ptr<AggregateState> inner_;
  L type_;
  std::unordered_set<unsigned __int128, Hash128> fixed_;
  std::set<std::pair<uint32_t, std::string>> strings_;
  std::vector<uint32_t> rows_, group_sel_;
  Vector scratch_;
};

double quantileParam(const AggregateParams& p) { return p.constants.empty() ? 0.5 : p.constants[0].doubleValue(); }

template <typename T>
std::unique_ptr<AggregateState> makeMinMax(L type, bool max) {
  if (max) return std::make_unique<MinMaxState<T, true>>(type);
  return std::make_unique<MinMaxState<T, false>>(type);
}

// argmin / argmax for every (arg, val) pair of types: arg BOOLEAN, BIGINT, DOUBLE, VARCHAR
// or ID; val BIGINT, DOUBLE or ID (ordered as min and max order them).
template <typename Add>
void registerArgExtremes(Add& add) {
  auto forVal = [&]<typename A>(L arg_type) {
    auto one = [&]<typename V>(L val_type) {
      for (bool max : {false, true}) {
        add(max ? "argmax" : "argmin", {arg_type, val_type}, 2, arg_type,
            [=](const AggregateParams&) -> std::unique_ptr<AggregateState> {
              if (max) return std::make_unique<ArgExtremeState<A, V, true>>(arg_type, val_type);
              return std::make_unique<ArgExtremeState<A, V, false>>(arg_type, val_type);
            });
      }
    };
    one.template operator()<int64_t>(L::kBigInt);
    one.template operator()<double>(L::kDouble);
    one.template operator()<int64_t>(L::kId);
  };
  forVal.template operator()<uint8_t>(L::kBoolean);
  forVal.template operator()<int64_t>(L::kBigInt);
  forVal.template operator()<double>(L::kDouble);
  forVal.template operator()<std::string_view>(L::kVarchar);
  forVal.template operator()<int64_t>(L::kId);
}

}  // namespace

void AggregateState::updateRuns(const Vector* const* args, const GroupRuns& runs) {
  // Correct for any state, if not fast (it allocates): the engine never calls it.
  std::vector<uint32_t> groups(runs.count == 0 ? 0 : runs.starts[runs.count]);
  expandRuns(runs, groups.data());
  update(args, groups.data(), groups.size());
}

std::unique_ptr<AggregateState> makeDistinctAggregate(std::unique_ptr<AggregateState> inner, LogicalType arg_type) {
  return std::make_unique<DistinctState>(std::move(inner), arg_type);
}

void registerAggregates(FunctionRegistry& r) {
  using Make = std::function<std::unique_ptr<AggregateState>(const AggregateParams&)>;
  auto add = [&](const char* name, std::vector<L> args, size_t row_args, L ret, Make make) {
    r.add(AggregateFunction{name, std::move(args), row_args, ret, std::move(make)});
  };
  add("count", {}, 0, L::kBigInt, [](const AggregateParams&) { return std::make_unique<CountState>(true); });
  for (L t : {L::kBoolean, L::kBigInt, L::kDouble, L::kVarchar, L::kId, L::kHistogram}) {
    add("count", {t}, 1, L::kBigInt, [](const AggregateParams&) { return std::make_unique<CountState>(false); });
  }
  add("sum", {L::kBigInt}, 1, L::kBigInt, [](const AggregateParams& p) { return std::make_unique<SumBigintState>(p); });
  add("sum", {L::kDouble}, 1, L::kDouble, [](const AggregateParams&) { return std::make_unique<SumDoubleState>(); });
  for (L t : {L::kBigInt, L::kDouble}) {
    add("avg", {t}, 1, L::kDouble, [t](const AggregateParams&) { return std::make_unique<AvgState>(t); });
  }
  for (bool max : {false, true}) {
    const char* name = max ? "max" : "min";
    add(name, {L::kBigInt}, 1, L::kBigInt, [max](const AggregateParams&) { return makeMinMax<int64_t>(L::kBigInt, max); });
    add(name, {L::kId}, 1, L::kId, [max](const AggregateParams&) { return makeMinMax<int64_t>(L::kId, max); });
    add(name, {L::kDouble}, 1, L::kDouble, [max](const AggregateParams&) { return makeMinMax<double>(L::kDouble, max); });
    add(name, {L::kBoolean}, 1, L::kBoolean, [max](const AggregateParams&) { return makeMinMax<uint8_t>(L::kBoolean, max); });
    add(name, {L::kVarchar}, 1, L::kVarchar, [max](const AggregateParams&) -> std::unique_ptr<AggregateState> {
      if (max) return std::make_unique<MinMaxStringState<true>>();
      return std::make_unique<MinMaxStringState<false>>();
    });
  }
  struct Var {
    const char* name;
    bool sample, root;
  };
  for (Var v : {Var{"stddev", true, true}, Var{"stddev_samp", true, true}, Var{"stddev_pop", false, true}, Var{"variance", true, false},
                Var{"var_samp", true, false}, Var{"var_pop", false, false}}) {
    for (L t : {L::kBigInt, L::kDouble}) {
      add(v.name, {t}, 1, L::kDouble, [v, t](const AggregateParams&) { return std::make_unique<VarianceState>(t, v.sample, v.root); });
    }
  }
  // Exact quantiles. median(x) = quantile_cont(x, 0.5); quantile(x, q) = quantile_cont(x, q).
  auto quantile = [](L t, bool discrete, bool median) {
    return [t, discrete, median](const AggregateParams& p) -> std::unique_ptr<AggregateState> {
      double q = median ? 0.5 : quantileParam(p);
      if (t == L::kBigInt) return std::make_unique<QuantileState<int64_t>>(t, q, discrete);
      return std::make_unique<QuantileState<double>>(t, q, discrete);
    };
  };
  for (L t : {L::kBigInt, L::kDouble}) {
    add("median", {t}, 1, L::kDouble, quantile(t, false, true));
    add("quantile", {t, L::kDouble}, 1, L::kDouble, quantile(t, false, false));
    add("quantile_cont", {t, L::kDouble}, 1, L::kDouble, quantile(t, false, false));
    add("quantile_disc", {t, L::kDouble}, 1, t, quantile(t, true, false));
  }
  for (L t : {L::kBigInt, L::kDouble}) {
    add("mad", {t}, 1, L::kDouble, [t](const AggregateParams&) -> std::unique_ptr<AggregateState> {
      if (t == L::kBigInt) return std::make_unique<MadState<int64_t>>();
      return std::make_unique<MadState<double>>();
    });
  }
  registerArgExtremes(add);
  add("hist_merge", {L::kHistogram}, 1, L::kHistogram, [](const AggregateParams&) { return std::make_unique<HistMergeState>(); });
}

}  // namespace argus::query
