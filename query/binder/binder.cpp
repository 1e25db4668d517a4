#include "query/binder/binder.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "query/common/suggestion.h"
#include "query/execution/expression_executor.h"
#include "query/function/cast.h"
#include "query/function/function_registry.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

constexpr size_t kMaxGroupKeys = 64;  // GroupTable keeps one NULL bit per key in a uint64
constexpr size_t kMaxCopiedNodes = 100'000;
constexpr int64_t kMaxHopWindows = 1024;  // windows one row may fall into: hop(step, size, slide) copies it size / slide times
// Window results are bound as column refs from here on, and moved behind the window
// stage's input columns once every clause is bound (aggregates may still be added before).
constexpr size_t kWindowColumnBase = size_t{1} << 40;

std::string joinTypes(const std::vector<L>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + std::string(typeName(types[i]));
  return out;
}

bool isOperatorName(const std::string& n) { return !n.empty() && !std::isalpha(static_cast<unsigned char>(n[0])); }

// A WITH query and the scope it was defined in (a linked list, innermost first).
struct CteScope {
  const CteScope* parent = nullptr;
  const CommonTableExpr* cte = nullptr;
};

enum class Mode : uint8_t { kSource, kAggregate };

constexpr uint32_t kMaxSourceDepth = 64;

class SelectBinder {
 public:
  SelectBinder(std::string_view sql, const CteScope* ctes, size_t* copied_nodes = nullptr, uint32_t depth = 0)
      : sql_(sql), ctes_(ctes), depth_(depth) {
    if (copied_nodes) copied_nodes_ = copied_nodes;
  }

  std::unique_ptr<BoundSelect> bind(const SelectStatement& s) {
    out_ = std::make_unique<BoundSelect>();
    scope_ = &out_->source;
    std::deque<CteScope> nodes;
    for (const CommonTableExpr& cte : s.ctes) {
      nodes.push_back(CteScope{ctes_, &cte});
      ctes_ = &nodes.back();
    }
    bindSource(s);

    aggregated_ = !s.group_by.empty() || s.having != nullptr;
    for (const SelectItem& item : s.select_list) aggregated_ = aggregated_ || containsAggregate(*item.expr);
    for (const OrderItem& o : s.order_by) aggregated_ = aggregated_ || containsAggregate(*o.expr);
    out_->aggregated = aggregated_;

    if (s.where) {
      setClause("WHERE", Mode::kSource, false);
      out_->where = requireBoolean(bindExpr(*s.where), "WHERE");
    }
    if (aggregated_) bindGroups(s);
    if (s.group_by.size() > kMaxGroupKeys) {
      throw BinderError(s.group_by[kMaxGroupKeys]->pos, "GROUP BY takes at most " + std::to_string(kMaxGroupKeys) + " expressions");
    }

    setClause("the select list", aggregated_ ? Mode::kAggregate : Mode::kSource, aggregated_, true);
    for (const SelectItem& item : s.select_list) {
      if (item.expr->type == ExprType::kStar) {
        expandStar(*item.expr);
        continue;
      }
      out_->projection.push_back(bindExpr(*item.expr));
      out_->names.push_back(item.alias.empty() ? textOf(*item.expr) : item.alias);
    }
    out_->visible = out_->projection.size();

    if (s.having) {
      setClause("HAVING", Mode::kAggregate, true);
      out_->having = requireBoolean(bindExpr(*s.having), "HAVING");
    }
    out_->distinct = s.distinct;
    if (s.distinct && out_->visible > kMaxGroupKeys) {
      throw BinderError(s.pos, "SELECT DISTINCT takes at most " + std::to_string(kMaxGroupKeys) + " columns");
    }
    if (s.distinct) {
      for (size_t i = 0; i < out_->visible; ++i) {
        if (out_->projection[i]->type == L::kHistogram) {
          throw BinderError(s.select_list.empty() ? s.pos : s.select_list[0].expr->pos,
                            "SELECT DISTINCT cannot compare HISTOGRAM column '" + out_->names[i] + "'");
        }
      }
    }
    bindOrder(s);
    refuseStrayHops(s);
    const size_t window_base = aggregated_ ? out_->groups.size() + out_->aggregates.size() : out_->source.names.size();
    for (auto& e : out_->projection) {
      visitExpr(*e, [&](BoundExpr& n) {
        if (n.kind == BoundExprKind::kColumnRef && n.column >= kWindowColumnBase) n.column = window_base + (n.column - kWindowColumnBase);
      });
    }
    out_->limit = s.limit;
    out_->offset = s.offset;
    return std::move(out_);
  }

 private:
  // Sets the binding mode for a scope and restores the previous one.
  struct ModeGuard {
    ModeGuard(SelectBinder* b, Mode m) : b_(b), saved_(b->mode_) { b_->mode_ = m; }
    ~ModeGuard() { b_->mode_ = saved_; }
    SelectBinder* b_;
    Mode saved_;
  };

  // --- sources ---
  void bindSource(const SelectStatement& s) {
    if (!s.from) {
      out_->source.kind = BoundSource::Kind::kNone;
      return;
    }
    bindRef(*s.from, &out_->source);
  }

  // Binds one FROM item into *src, with its columns' qualifiers.
  void bindRef(const TableRef& ref, BoundSource* src) {
    if (ref.kind == TableRef::Kind::kJoin) {
      bindJoin(ref, src);
      return;
    }
    if (ref.kind == TableRef::Kind::kFunction) {
      bindTableFunction(ref, src);
      return;
    }
    // Binding, planning and running recurse once per level: a chain of WITH queries each
    // reading the one before must not run the server out of stack.
    if ((ref.kind == TableRef::Kind::kSubquery || findCte(ref.name)) && depth_ + 1 > kMaxSourceDepth) {
      throw BinderError(ref.pos, "query nested too deeply (more than " + std::to_string(kMaxSourceDepth) +
                                     " levels of subqueries and WITH queries reading each other)");
    }
    std::string qualifier;
    if (ref.kind == TableRef::Kind::kSubquery) {
      src->kind = BoundSource::Kind::kSubquery;
      src->subquery = SelectBinder(sql_, ctes_, copied_nodes_, depth_ + 1).bind(*ref.subquery);
      qualifier = ref.alias;
      source_desc_ = ref.alias.empty() ? "the subquery in FROM" : "subquery '" + ref.alias + "'";
    } else if (const CteScope* cte = findCte(ref.name)) {
      src->kind = BoundSource::Kind::kSubquery;
      src->subquery = SelectBinder(sql_, cte->parent, copied_nodes_, depth_ + 1).bind(*cte->cte->query);
      qualifier = ref.alias.empty() ? ref.name : ref.alias;
      source_desc_ = "WITH query '" + ref.name + "'";
    } else if (const TableInfo* table = findTable(ref.name)) {
      src->kind = BoundSource::Kind::kTable;
      src->table = table;
      for (const TableColumn& c : table->columns) {
        src->names.push_back(c.name);
        src->types.push_back(c.type);
      }
      qualifier = ref.alias.empty() ? ref.name : ref.alias;
      source_desc_ = "table " + ref.name;
    } else {
      std::vector<std::string> names;
      for (const TableInfo& t : catalogTables()) names.push_back(t.name);
      for (const CteScope* c = ctes_; c; c = c->parent) names.push_back(c->cte->name);
      if (TableFunctionRegistry::instance().find(ref.name)) {
        throw BinderError(ref.pos, "'" + ref.name + "' is a table function: call it with its arguments, FROM " + ref.name + "(...)");
      }
      throw BinderError(ref.pos, "no table '" + ref.name + "' (tables: " + tableNamesText() + ")" + suggestion(ref.name, names));
    }
    if (src->subquery) {
      const BoundSelect& sub = *src->subquery;
      for (size_t i = 0; i < sub.visible; ++i) {
        src->names.push_back(sub.names[i]);
        src->types.push_back(sub.projection[i]->type);
      }
    }
    src->qualifiers.assign(src->names.size(), qualifier);
    src->hidden.assign(src->names.size(), false);
  }

  // a JOIN b: columns [a's..., b's...]; ON is bound over them, USING (c) becomes a.c = b.c
  // with b's c hidden from * and from unqualified names.
  void bindJoin(const TableRef& ref, BoundSource* src) {
    src->kind = BoundSource::Kind::kJoin;
    src->join_type = ref.join_type;
    src->left = std::make_unique<BoundSource>();
    src->right = std::make_unique<BoundSource>();
    bindRef(*ref.left, src->left.get());
    bindRef(*ref.right, src->right.get());
    for (const std::string& q : src->right->qualifiers) {
      if (q.empty()) continue;
      const auto& lq = src->left->qualifiers;
      if (std::find(lq.begin(), lq.end(), q) != lq.end()) {
        throw BinderError(ref.right->pos, "table name '" + q + "' appears twice in FROM; give one of them an alias (FROM t AS a JOIN t AS b)");
      }
    }
    for (const BoundSource* side : {src->left.get(), src->right.get()}) {
      src->names.insert(src->names.end(), side->names.begin(), side->names.end());
      src->types.insert(src->types.end(), side->types.begin(), side->types.end());
      src->qualifiers.insert(src->qualifiers.end(), side->qualifiers.begin(), side->qualifiers.end());
      src->hidden.insert(src->hidden.end(), side->hidden.begin(), side->hidden.end());
    }
    source_desc_ = "the joined tables";
    if (ref.condition) {
      const BoundSource* saved_scope = scope_;
      scope_ = src;
      setClause("ON", Mode::kSource, false);
      src->condition = requireBoolean(bindExpr(*ref.condition), "ON");
      scope_ = saved_scope;
    }
    const size_t width = src->left->names.size();
    for (size_t u = 0; u < ref.using_columns.size(); ++u) {
      const std::string& name = ref.using_columns[u];
      size_t l = usingColumn(*src->left, name, ref.using_pos[u], "left");
      size_t r = width + usingColumn(*src->right, name, ref.using_pos[u], "right");
      src->hidden[r] = true;
      std::vector<BoundExprPtr> args;
      args.push_back(makeColumnRef(l, src->types[l], ref.using_pos[u]));
      args.push_back(makeColumnRef(r, src->types[r], ref.using_pos[u]));
      BoundExprPtr eq = callScalar("=", std::move(args), ref.using_pos[u], "=");
      src->condition = src->condition ? makeLogical(BoundExprKind::kAnd, std::move(src->condition), std::move(eq), ref.using_pos[u]) : std::move(eq);
    }
  }

  // The one visible column `name` of one side of a USING join.
  size_t usingColumn(const BoundSource& side, const std::string& name, SourcePos pos, const char* which) const {
    std::vector<size_t> found = findColumns(side, name);
    if (found.empty()) throw BinderError(pos, "USING column '" + name + "' is not in the " + which + " side of the join" + suggestion(name, side.names));
    if (found.size() > 1) throw BinderError(pos, "USING column '" + name + "' is ambiguous in the " + which + " side of the join");
    return found[0];
  }

  // FROM f(args): the arguments are constant expressions, evaluated here, then matched to
  // f's parameters; f's bind() gives the columns.
  void bindTableFunction(const TableRef& ref, BoundSource* src) {
    const TableFunctionRegistry& reg = TableFunctionRegistry::instance();
    const TableFunction* f = reg.find(ref.name);
    if (!f) {
      std::string listed;
      for (const std::string& n : reg.names()) listed += (listed.empty() ? "" : ", ") + n;
      std::string hint = suggestion(ref.name, reg.names());
      if (findTable(ref.name) || findCte(ref.name)) hint = "; '" + ref.name + "' is a table: FROM " + ref.name + " without arguments";
      throw BinderError(ref.pos, "no table function '" + ref.name + "' (table functions: " + listed + ")" + hint);
    }
    setClause("table function arguments", Mode::kSource, false);
    std::vector<TableFunctionArgument> given;
    for (const TableFunctionArg& a : ref.args) {
      refuseColumnRefs(*a.expr, *f);
      BoundExprPtr b = bindExpr(*a.expr);
      visitExpr(*b, [](BoundExpr& n) {
        if (isHop(n)) throw BinderError(n.pos, "hop() is only allowed as a whole GROUP BY key");
      });
      given.push_back(TableFunctionArgument{a.name, evaluateConstant(*b, *f), a.pos});
    }
    src->kind = BoundSource::Kind::kTableFunction;
    src->function = f;
    src->function_args = matchArguments(*f, given, ref.pos);
    src->function_binding = f->bind(src->function_args);
    src->names = src->function_binding.names;
    src->types = src->function_binding.types;
    src->qualifiers.assign(src->names.size(), ref.alias.empty() ? ref.name : ref.alias);
    src->hidden.assign(src->names.size(), false);
    source_desc_ = "table function " + ref.name + "()";
  }

  static void refuseColumnRefs(const ParsedExpr& e, const TableFunction& f) {
    if (e.type == ExprType::kColumn) {
      throw BinderError(e.pos, f.name() + "(): arguments must be constant expressions; '" + e.names.back() + "' is a column reference" +
                                   " (a string is written in single quotes: '" + e.names.back() + "')");
    }
    for (const auto& c : e.children) refuseColumnRefs(*c, f);
  }

  // The value of an expression without column references, over one row of no columns. A
  // failure (overflow, a bad cast) is the query's text at fault: a binder error.
  static Value evaluateConstant(const BoundExpr& e, const TableFunction& f) {
    if (e.kind == BoundExprKind::kConstant) return e.value;
    DataChunk one;
    one.reset(0);
    one.rows = 1;
    try {
      ExpressionExecutor executor(e);
      Value v = executor.evaluate(one).value(0);
      return v.isNull() ? Value::null(e.type) : v;
    } catch (const ExecutionError& error) {
      throw BinderError(error.pos().known() ? error.pos() : e.pos, f.name() + "(): an argument cannot be evaluated: " + error.cause());
    }
  }

  const CteScope* findCte(const std::string& name) const {
    for (const CteScope* c = ctes_; c; c = c->parent) {
      if (c->cte->name == name) return c;
    }
    return nullptr;
  }

  // --- clauses ---
  void setClause(const char* clause, Mode mode, bool allow_aggregates, bool allow_windows = false) {
    clause_ = clause;
    mode_ = mode;
    allow_aggregates_ = allow_aggregates;
    allow_windows_ = allow_windows;
  }

  BoundExprPtr requireBoolean(BoundExprPtr e, const char* clause) {
    if (e->type == L::kNull) return coerce(std::move(e), L::kBoolean);
    if (e->type != L::kBoolean) {
      throw BinderError(e->pos, std::string(clause) + " needs a BOOLEAN condition, got " + typeName(e->type));
    }
    return e;
  }

  void bindGroups(const SelectStatement& s) {
    setClause("GROUP BY", Mode::kSource, false);
    for (const ParsedExprPtr& g : s.group_by) {
      const ParsedExpr* target = g.get();
      std::string name = textOf(*g);
      if (g->type == ExprType::kConstant && g->value.type() == L::kBigInt) {
        int64_t k = g->value.bigintValue();
        if (k < 1 || static_cast<size_t>(k) > s.select_list.size() || s.select_list[k - 1].expr->type == ExprType::kStar) {
          throw BinderError(g->pos, "GROUP BY position " + std::to_string(k) + " is not in the select list (1 to " +
                                        std::to_string(s.select_list.size()) + ")");
        }
        const SelectItem& item = s.select_list[k - 1];
        target = item.expr.get();
        name = item.alias.empty() ? textOf(*item.expr) : item.alias;
        if (containsAggregate(*target)) throw BinderError(g->pos, "GROUP BY position " + std::to_string(k) + " refers to an aggregate");
      } else if (g->type == ExprType::kColumn && g->names.size() == 1 && findSourceColumns(g->names[0]).empty()) {
        for (const SelectItem& item : s.select_list) {
          if (!item.alias.empty() && item.alias == g->names[0]) {
            if (containsAggregate(*item.expr)) throw BinderError(g->pos, "GROUP BY '" + item.alias + "' refers to an aggregate");
            target = item.expr.get();
            break;
          }
        }
      }
      BoundExprPtr b = bindExpr(*target);
      if (b->type == L::kHistogram) throw BinderError(g->pos, "cannot GROUP BY a HISTOGRAM ('" + name + "')");
      out_->groups.push_back(std::move(b));
      out_->group_names.push_back(name);
    }
  }

  // * (every column but hidden USING copies) or x.* (x's columns).
  void expandStar(const ParsedExpr& star) {
    const BoundSource& src = out_->source;
    if (src.kind == BoundSource::Kind::kNone) throw BinderError(star.pos, "SELECT * needs a FROM clause");
    std::vector<size_t> columns;
    if (star.names.empty()) {
      for (size_t i = 0; i < src.names.size(); ++i) {
        if (!src.hidden[i]) columns.push_back(i);
      }
    } else {
      columns = qualifiedColumns(src, star.names[0], star.pos);
    }
    for (size_t i : columns) {
      BoundExprPtr ref = makeColumnRef(i, src.types[i], star.pos);
      if (mode_ == Mode::kAggregate) {
        int g = findGroup(*ref);
        if (g < 0) {
          throw BinderError(star.pos, "SELECT * in a grouped query: column '" + src.names[i] +
                                          "' must appear in the GROUP BY clause or be used in an aggregate function");
        }
        ref = makeColumnRef(static_cast<size_t>(g), ref->type, star.pos);
      }
      out_->projection.push_back(std::move(ref));
      out_->names.push_back(src.names[i]);
    }
  }

  void bindOrder(const SelectStatement& s) {
    setClause("ORDER BY", aggregated_ ? Mode::kAggregate : Mode::kSource, aggregated_, true);
    for (const OrderItem& o : s.order_by) {
      OrderKey key;
      key.desc = o.desc;
      // Default: NULLs sort last ascending, first descending (NULL is the largest value).
      key.nulls_first = o.nulls == OrderItem::Nulls::kDefault ? o.desc : o.nulls == OrderItem::Nulls::kFirst;
      const ParsedExpr& e = *o.expr;
      if (e.type == ExprType::kConstant && e.value.type() == L::kBigInt) {
        int64_t k = e.value.bigintValue();
        if (k < 1 || static_cast<size_t>(k) > out_->visible) {
          throw BinderError(e.pos, "ORDER BY position " + std::to_string(k) + " is not in the select list (1 to " +
                                       std::to_string(out_->visible) + ")");
        }
        key.column = static_cast<size_t>(k - 1);
        out_->order.push_back(key);
        continue;
      }
      if (e.type == ExprType::kColumn && e.names.size() == 1) {
        int found = -1;
        for (size_t i = 0; i < s.select_list.size() && i < out_->visible; ++i) {
          if (!s.select_list[i].alias.empty() && s.select_list[i].alias == e.names[0]) {
            found = static_cast<int>(i);
            break;
          }
        }
        if (found < 0 && findSourceColumns(e.names[0]).empty()) {
          // An output name (a column of the select list) that is not a source column.
          for (size_t i = 0; i < out_->visible; ++i) {
            if (out_->names[i] == e.names[0]) {
              found = static_cast<int>(i);
              break;
            }
          }
        }
        if (found >= 0) {
          key.column = static_cast<size_t>(found);
          out_->order.push_back(key);
          continue;
        }
      }
      BoundExprPtr b = bindExpr(e);
      if (b->type == L::kHistogram) throw BinderError(e.pos, "cannot ORDER BY a HISTOGRAM");
      int found = -1;
      for (size_t i = 0; i < out_->projection.size(); ++i) {
        if (sameExpr(*out_->projection[i], *b)) {
          found = static_cast<int>(i);
          break;
        }
      }
      if (found < 0) {
        if (out_->distinct) throw BinderError(e.pos, "for SELECT DISTINCT, ORDER BY expressions must appear in the select list");
        found = static_cast<int>(out_->projection.size());
        out_->projection.push_back(std::move(b));
        out_->names.push_back(textOf(e));
      }
      key.column = static_cast<size_t>(found);
      out_->order.push_back(key);
    }
  }

  // --- expressions ---
  std::string textOf(const ParsedExpr& e) const {
    if (e.type == ExprType::kColumn) return e.names.back();
    if (e.pos.offset <= e.end && e.end <= sql_.size()) return std::string(sql_.substr(e.pos.offset, e.end - e.pos.offset));
    return toString(e);
  }

  std::vector<size_t> findSourceColumns(const std::string& name) const { return findColumns(*scope_, name); }

  // The columns of src an unqualified `name` may mean (hidden USING copies left out).
  static std::vector<size_t> findColumns(const BoundSource& src, const std::string& name) {
    std::vector<size_t> found;
    for (size_t i = 0; i < src.names.size(); ++i) {
      if (src.names[i] == name && !src.hidden[i]) found.push_back(i);
    }
    return found;
  }

  int findGroup(const BoundExpr& b) const {
    for (size_t g = 0; g < out_->groups.size(); ++g) {
      if (sameExpr(*out_->groups[g], b)) return static_cast<int>(g);
    }
    return -1;
  }

  static bool hasColumnRefs(const BoundExpr& e) {
    if (e.kind == BoundExprKind::kColumnRef) return true;
    for (const auto& c : e.children) {
      if (hasColumnRefs(*c)) return true;
    }
    return false;
  }

  // Whether a call is an aggregate. quantile() is both: the aggregate over numbers and the
  // scalar over a histogram; its first argument decides.
  bool isAggregateCall(const ParsedExpr& e) {
    if (e.type != ExprType::kFunction || e.window) return false;
    const FunctionRegistry& reg = FunctionRegistry::instance();
    if (!reg.aggregate(e.op)) return false;
    if (!reg.scalar(e.op) || e.children.empty()) return true;
    // Memoized: nested quantile() calls would otherwise cost 2^depth.
    auto it = aggregate_call_.find(&e);
    if (it != aggregate_call_.end()) return it->second;
    bool aggregate = !yieldsHistogram(*e.children[0]);
    aggregate_call_[&e] = aggregate;
    return aggregate;
  }

  bool yieldsHistogram(const ParsedExpr& e) {
    if (e.type == ExprType::kFunction && e.op == "hist_merge") return true;
    if (e.type == ExprType::kColumn) {
      auto cols = findSourceColumns(e.names.back());
      return cols.size() == 1 && scope_->types[cols[0]] == L::kHistogram;
    }
    if (containsAggregate(e)) return false;
    ModeGuard guard(this, Mode::kSource);
    try {
      return bindNode(e)->type == L::kHistogram;
    } catch (const BinderError&) {
      return false;
    }
  }

  bool containsAggregate(const ParsedExpr& e) {
    auto it = contains_aggregate_.find(&e);
    if (it != contains_aggregate_.end()) return it->second;
    bool found = isAggregateCall(e);
    for (size_t i = 0; i < e.children.size() && !found; ++i) found = containsAggregate(*e.children[i]);
    if (e.window) {
      for (const auto& p : e.window->partition_by) found = found || containsAggregate(*p);
      for (const OrderItem& o : e.window->order_by) found = found || containsAggregate(*o.expr);
    }
    contains_aggregate_[&e] = found;
    return found;
  }

  static bool containsWindow(const ParsedExpr& e) {
    if (e.window) return true;
    for (const auto& c : e.children) {
      if (containsWindow(*c)) return true;
    }
    return false;
  }

  // copyExpr for the rewrites that repeat an operand (BETWEEN, CASE x WHEN): nested ones
  // multiply, so the copies of one query are capped.
  BoundExprPtr copyOperand(const BoundExpr& e, SourcePos pos) {
    struct Count {
      static size_t of(const BoundExpr& x) {
        size_t n = 1;
        for (const auto& c : x.children) n += of(*c);
        return n;
      }
    };
    *copied_nodes_ += Count::of(e);
    if (*copied_nodes_ > kMaxCopiedNodes) {
      throw BinderError(pos, "query too large: BETWEEN and CASE operands expand to more than " + std::to_string(kMaxCopiedNodes) +
                                 " expression nodes");
    }
    return copyExpr(e);
  }

  BoundExprPtr bindExpr(const ParsedExpr& e) {
    if (e.window) return bindWindowCall(e);
    if (mode_ == Mode::kAggregate) {
      if (isAggregateCall(e)) return bindAggregateCall(e);
      if (!containsAggregate(e) && !containsWindow(e)) {
        BoundExprPtr b;
        {
          ModeGuard guard(this, Mode::kSource);
          b = bindNode(e);
        }
        int g = findGroup(*b);
        if (g >= 0) return makeColumnRef(static_cast<size_t>(g), b->type, e.pos);
        if (!hasColumnRefs(*b)) return b;
        if (e.type == ExprType::kColumn) {
          throw BinderError(e.pos, "column '" + e.names.back() + "' must appear in the GROUP BY clause or be used in an aggregate function");
        }
      }
    } else if (isAggregateCall(e)) {
      if (in_aggregate_) throw BinderError(e.op_pos, "aggregate function calls cannot be nested");
      throw BinderError(e.op_pos, "aggregate function " + e.op + "() is not allowed in " + clause_);
    }
    return bindNode(e);
  }

  BoundExprPtr bindNode(const ParsedExpr& e) {
    switch (e.type) {
      case ExprType::kColumn: return bindColumn(e);
      case ExprType::kStar: throw BinderError(e.pos, "'*' is only allowed as a whole select item or in count(*)");
      case ExprType::kConstant: return makeConstant(e.value, e.pos);
      case ExprType::kUnary: return bindUnary(e);
      case ExprType::kBinary: return bindBinary(e);
      case ExprType::kFunction: return bindFunction(e);
      case ExprType::kCase: return bindCase(e);
      case ExprType::kCast: {
        BoundExprPtr c = bindExpr(*e.children[0]);
        if (!canCast(c->type, e.cast_type)) {
          throw BinderError(e.op_pos, std::string("cannot cast ") + typeName(c->type) + " to " + typeName(e.cast_type));
        }
        if (c->type == e.cast_type) return c;
        return makeCast(std::move(c), e.cast_type, e.op_pos);
      }
      case ExprType::kIsNull: {
        auto n = std::make_unique<BoundExpr>();
        n->kind = BoundExprKind::kIsNull;
        n->type = L::kBoolean;
        n->pos = e.op_pos;
        n->negated = e.negated;
        n->children.push_back(bindExpr(*e.children[0]));
        return n;
      }
      case ExprType::kBetween: {
        BoundExprPtr v = bindExpr(*e.children[0]);
        BoundExprPtr lo = bindExpr(*e.children[1]);
        BoundExprPtr hi = bindExpr(*e.children[2]);
        std::vector<BoundExprPtr> ge_args, le_args;
        ge_args.push_back(copyOperand(*v, e.op_pos));
        ge_args.push_back(std::move(lo));
        le_args.push_back(std::move(v));
        le_args.push_back(std::move(hi));
        BoundExprPtr both = makeLogical(BoundExprKind::kAnd, callScalar(">=", std::move(ge_args), e.op_pos, "BETWEEN"),
                                        callScalar("<=", std::move(le_args), e.op_pos, "BETWEEN"), e.op_pos);
        return e.negated ? makeNot(std::move(both), e.op_pos) : std::move(both);
      }
      case ExprType::kIn: return bindIn(e);
      case ExprType::kLike: {
        std::vector<BoundExprPtr> args;
        args.push_back(bindExpr(*e.children[0]));
        args.push_back(bindExpr(*e.children[1]));
        BoundExprPtr like = callScalar("like", std::move(args), e.op_pos, "LIKE");
        return e.negated ? makeNot(std::move(like), e.op_pos) : std::move(like);
      }
    }
    throw BinderError(e.pos, "BUG: unknown expression kind");
  }

  BoundExprPtr bindColumn(const ParsedExpr& e) {
    const BoundSource& src = *scope_;
    const std::string& name = e.names.back();
    if (e.names.size() == 2) {
      std::vector<size_t> qualified = qualifiedColumns(src, e.names[0], e.pos);
      std::vector<size_t> found;
      std::vector<std::string> names;
      for (size_t i : qualified) {
        if (src.names[i] == name) found.push_back(i);
        names.push_back(src.names[i]);
      }
      if (found.empty()) {
        std::string where = src.kind == BoundSource::Kind::kJoin ? "'" + e.names[0] + "'" : source_desc_;
        throw BinderError(e.pos, "no column '" + name + "' in " + where + suggestion(name, names));
      }
      if (found.size() > 1) throw BinderError(e.pos, "column name '" + e.names[0] + "." + name + "' is ambiguous");
      return makeColumnRef(found[0], src.types[found[0]], e.pos);
    }
    if (src.kind == BoundSource::Kind::kNone) throw BinderError(e.pos, "no column '" + name + "': the query has no FROM clause");
    std::vector<size_t> found = findSourceColumns(name);
    if (found.empty()) {
      throw BinderError(e.pos, "no column '" + name + "' in " + source_desc_ + suggestion(name, src.names));
    }
    if (found.size() > 1) {
      std::string where;
      for (size_t i : found) where += (where.empty() ? "" : " and ") + (src.qualifiers[i].empty() ? "a subquery" : "'" + src.qualifiers[i] + "'");
      throw BinderError(e.pos, "column name '" + name + "' is ambiguous in " + source_desc_ +
                                   (src.kind == BoundSource::Kind::kJoin ? " (it is in " + where + "); qualify it, as in x." + name : ""));
    }
    return makeColumnRef(found[0], src.types[found[0]], e.pos);
  }

  // The columns of src qualified by `qualifier` (x in x.col or x.*); throws when none is.
  static std::vector<size_t> qualifiedColumns(const BoundSource& src, const std::string& qualifier, SourcePos pos) {
    std::vector<size_t> out;
    std::vector<std::string> known;
    for (size_t i = 0; i < src.names.size(); ++i) {
      if (src.qualifiers[i] == qualifier) out.push_back(i);
      if (!src.qualifiers[i].empty() && std::find(known.begin(), known.end(), src.qualifiers[i]) == known.end()) known.push_back(src.qualifiers[i]);
    }
    if (out.empty()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "'" : ", '") + k + "'";
      throw BinderError(pos, "no table '" + qualifier + "' in FROM" + (names.empty() ? "" : " (FROM names " + names + ")"));
    }
    return out;
  }

  BoundExprPtr bindUnary(const ParsedExpr& e) {
    BoundExprPtr c = bindExpr(*e.children[0]);
    if (e.op == "NOT") return makeNot(requireBooleanOperand(std::move(c), "NOT"), e.op_pos);
    if (e.op == "+") {
      if (!isNumeric(c->type) && c->type != L::kNull) throw BinderError(e.op_pos, std::string("no operator '+' for ") + typeName(c->type));
      return c;
    }
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(c));
    return callScalar("-", std::move(args), e.op_pos, "-");
  }

  BoundExprPtr bindBinary(const ParsedExpr& e) {
    BoundExprPtr l = bindExpr(*e.children[0]);
    BoundExprPtr r = bindExpr(*e.children[1]);
    if (e.op == "AND" || e.op == "OR") {
      return makeLogical(e.op == "AND" ? BoundExprKind::kAnd : BoundExprKind::kOr, requireBooleanOperand(std::move(l), e.op.c_str()),
                         requireBooleanOperand(std::move(r), e.op.c_str()), e.op_pos);
    }
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(l));
    args.push_back(std::move(r));
    return callScalar(e.op, std::move(args), e.op_pos, e.op);
  }

  BoundExprPtr bindFunction(const ParsedExpr& e) {
    const FunctionRegistry& reg = FunctionRegistry::instance();
    if (!reg.scalar(e.op)) {
      if (TableFunctionRegistry::instance().find(e.op)) {
        throw BinderError(e.op_pos, e.op + "() is a table function: it goes in FROM (SELECT * FROM " + e.op + "(...))");
      }
      throw BinderError(e.op_pos, "no function '" + e.op + "'" + suggestion(e.op, reg.names()));
    }
    if (e.distinct) throw BinderError(e.op_pos, "DISTINCT is only allowed in aggregate functions, not in " + e.op + "()");
    if (e.star_arg) throw BinderError(e.op_pos, "only count(*) takes '*'");
    std::vector<BoundExprPtr> args;
    for (const auto& c : e.children) args.push_back(bindExpr(*c));
    if (e.op == "tumble" || e.op == "hop") checkStepWindow(e, args);
    return callScalar(e.op, std::move(args), e.op_pos, e.op);
  }

  // tumble(step, n) and hop(step, size, slide) take positive BIGINT constants; a hop's size
  // is a whole number of slides (each row then lands in size / slide windows).
  static void checkStepWindow(const ParsedExpr& e, const std::vector<BoundExprPtr>& args) {
    const size_t want = e.op == "tumble" ? 2 : 3;
    if (args.size() != want) throw BinderError(e.op_pos, e.op + (want == 2 ? "() takes (step, width)" : "() takes (step, size, slide)"));
    static const char* kWhat[] = {"", "the window size", "the slide"};
    for (size_t k = 1; k < args.size(); ++k) {
      const BoundExpr& a = *args[k];
      if (a.kind != BoundExprKind::kConstant || a.type != L::kBigInt || a.value.isNull() || a.value.bigintValue() <= 0) {
        std::string got = a.kind == BoundExprKind::kConstant ? a.value.toSql() : "an expression";
        throw BinderError(e.children[k]->pos, e.op + "(): " + kWhat[k] + " must be a positive BIGINT constant, got " + got);
      }
    }
    if (want == 3) {
      const int64_t size = args[1]->value.bigintValue(), slide = args[2]->value.bigintValue();
      if (size % slide != 0) {
        throw BinderError(e.children[1]->pos, "hop(): the window size (" + std::to_string(size) + ") must be a multiple of the slide (" +
                                                  std::to_string(slide) + ")");
      }
      if (size / slide > kMaxHopWindows) {
        throw BinderError(e.children[1]->pos, "hop(): a row would fall into " + std::to_string(size / slide) + " windows (size / slide); at most " +
                                                  std::to_string(kMaxHopWindows));
      }
    }
  }

  static bool isHop(const BoundExpr& e) { return e.kind == BoundExprKind::kFunction && e.function->name == "hop"; }

  // hop() is a GROUP BY key of its own (at most one), or that key repeated in the select
  // list, HAVING or ORDER BY (bound there as a reference to the group); anything else is refused.
  void refuseStrayHops(const SelectStatement& s) {
    auto refuse = [](BoundExpr* e) {
      if (!e) return;
      visitExpr(*e, [](BoundExpr& n) {
        if (isHop(n)) throw BinderError(n.pos, "hop() is only allowed as a whole GROUP BY key");
      });
    };
    size_t hops = 0;
    for (size_t g = 0; g < out_->groups.size(); ++g) {
      BoundExpr& key = *out_->groups[g];
      if (isHop(key)) {
        if (++hops > 1) throw BinderError(s.group_by[g]->pos, "GROUP BY takes at most one hop() key");
        for (auto& c : key.children) refuse(c.get());
      } else {
        refuse(&key);
      }
    }
    refuse(out_->where.get());
    refuse(out_->having.get());
    for (auto& p : out_->projection) refuse(p.get());
    for (auto& a : out_->aggregates) {
      for (auto& arg : a.args) refuse(arg.get());
    }
    for (auto& w : out_->windows) {
      for (auto* list : {&w.args, &w.partitions, &w.orders}) {
        for (auto& x : *list) refuse(x.get());
      }
    }
  }

  BoundExprPtr bindCase(const ParsedExpr& e) {
    auto n = std::make_unique<BoundExpr>();
    n->kind = BoundExprKind::kCase;
    n->pos = e.op_pos;
    n->has_else = e.has_else;
    size_t i = 0;
    BoundExprPtr operand;
    if (e.has_operand) operand = bindExpr(*e.children[i++]);
    size_t pairs_end = e.children.size() - (e.has_else ? 1 : 0);
    std::vector<BoundExprPtr> results;
    for (; i < pairs_end; i += 2) {
      BoundExprPtr cond = bindExpr(*e.children[i]);
      if (operand) {
        std::vector<BoundExprPtr> args;
        args.push_back(copyOperand(*operand, e.op_pos));
        args.push_back(std::move(cond));
        cond = callScalar("=", std::move(args), e.children[i]->pos, "CASE");
      } else {
        cond = requireBooleanOperand(std::move(cond), "WHEN");
      }
      n->children.push_back(std::move(cond));
      n->children.push_back(bindExpr(*e.children[i + 1]));
    }
    if (e.has_else) n->children.push_back(bindExpr(*e.children.back()));
    std::vector<BoundExprPtr*> outs;
    size_t pairs = (n->children.size() - (e.has_else ? 1 : 0)) / 2;
    for (size_t k = 0; k < pairs; ++k) outs.push_back(&n->children[2 * k + 1]);
    if (e.has_else) outs.push_back(&n->children.back());
    n->type = unify(outs, e.op_pos, "CASE");
    return n;
  }

  BoundExprPtr bindIn(const ParsedExpr& e) {
    auto n = std::make_unique<BoundExpr>();
    n->kind = BoundExprKind::kIn;
    n->type = L::kBoolean;
    n->pos = e.op_pos;
    n->negated = e.negated;
    for (const auto& c : e.children) n->children.push_back(bindExpr(*c));
    std::vector<BoundExprPtr*> all;
    for (auto& c : n->children) all.push_back(&c);
    L t = unify(all, e.op_pos, "IN");
    if (t == L::kHistogram) throw BinderError(e.op_pos, "IN cannot compare HISTOGRAM values");
    return n;
  }

  // --- aggregates ---
  BoundExprPtr bindAggregateCall(const ParsedExpr& e) {
    if (!allow_aggregates_) throw BinderError(e.op_pos, "aggregate function " + e.op + "() is not allowed in " + clause_);
    if (in_aggregate_) throw BinderError(e.op_pos, "aggregate function calls cannot be nested");
    const auto* candidates = FunctionRegistry::instance().aggregate(e.op);
    if (e.star_arg && e.op != "count") throw BinderError(e.op_pos, "only count(*) takes '*'");
    if (e.distinct && e.children.size() != 1) throw BinderError(e.op_pos, "DISTINCT needs exactly one argument in " + e.op + "()");

    std::vector<BoundExprPtr> args;
    {
      ModeGuard guard(this, Mode::kSource);
      in_aggregate_ = true;
      for (const auto& c : e.children) args.push_back(bindExpr(*c));
      in_aggregate_ = false;
    }
    BoundAggregate agg;
    agg.function = resolveAggregate(e, *candidates, args, &agg.args, &agg.constants);
    agg.distinct = e.distinct;
    agg.pos = e.op_pos;
    agg.text = textOf(e);
    agg.type = agg.function->ret;
    if (agg.distinct && !agg.args.empty() && agg.args[0]->type == L::kHistogram) {
      throw BinderError(e.op_pos, "DISTINCT cannot compare HISTOGRAM values");
    }
    size_t index = out_->aggregates.size();
    for (size_t i = 0; i < out_->aggregates.size(); ++i) {
      if (sameAggregate(out_->aggregates[i], agg)) {
        index = i;
        break;
      }
    }
    if (index == out_->aggregates.size()) out_->aggregates.push_back(std::move(agg));
    return makeColumnRef(out_->groups.size() + index, out_->aggregates[index].type, e.pos);
  }

  // The overload of aggregate e.op for args: the per-row arguments coerced into *row_args,
  // the constant ones (quantile's q) into *constants.
  const AggregateFunction* resolveAggregate(const ParsedExpr& e, const std::vector<AggregateFunction>& candidates, std::vector<BoundExprPtr>& args,
                                            std::vector<BoundExprPtr>* row_args, std::vector<Value>* constants) {
    const AggregateFunction* best = nullptr;
    int best_cost = -1;
    for (const AggregateFunction& f : candidates) {
      if (f.args.size() != args.size()) continue;
      int cost = 0;
      for (size_t k = 0; k < args.size() && cost >= 0; ++k) {
        int c = castCost(*args[k], f.args[k], false);
        cost = c < 0 ? -1 : cost + c;
      }
      if (cost >= 0 && (best == nullptr || cost < best_cost)) {
        best = &f;
        best_cost = cost;
      }
    }
    if (!best) {
      std::vector<L> types;
      for (const auto& a : args) types.push_back(a->type);
      throw BinderError(e.op_pos, "no aggregate " + e.op + "(" + joinTypes(types) + ")" + signatures(candidates));
    }
    for (size_t k = 0; k < args.size(); ++k) {
      BoundExprPtr a = coerce(std::move(args[k]), best->args[k]);
      if (k < best->row_args) {
        row_args->push_back(std::move(a));
        continue;
      }
      if (a->kind != BoundExprKind::kConstant) throw BinderError(e.children[k]->pos, e.op + "(): argument " + std::to_string(k + 1) + " must be a constant");
      if (e.op.starts_with("quantile") && (a->value.isNull() || !(a->value.doubleValue() >= 0 && a->value.doubleValue() <= 1))) {
        throw BinderError(e.children[k]->pos, e.op + "(): the quantile must be a constant between 0 and 1, got " + a->value.toSql());
      }
      constants->push_back(a->value);
    }
    return best;
  }

  // --- window functions ---
  struct FlagGuard {
    FlagGuard(bool* flag, bool v) : flag_(flag), saved_(*flag) { *flag_ = v; }
    ~FlagGuard() { *flag_ = saved_; }
    bool* flag_;
    bool saved_;
  };

  // f(args) OVER (...): binds the call and its window over the window stage's input and
  // returns a reference to its result (moved into place at the end of bind()).
  BoundExprPtr bindWindowCall(const ParsedExpr& e) {
    if (in_window_) throw BinderError(e.op_pos, "window function calls cannot be nested");
    if (in_aggregate_) throw BinderError(e.op_pos, "window function " + e.op + "() is not allowed inside an aggregate function");
    if (!allow_windows_) {
      throw BinderError(e.op_pos, "window function " + e.op + "() is not allowed in " + clause_ + " (only in the select list and ORDER BY)");
    }
    if (e.distinct) throw BinderError(e.op_pos, "DISTINCT is not supported in window functions");
    const FunctionRegistry& reg = FunctionRegistry::instance();
    BoundWindow w;
    w.call.pos = e.op_pos;
    w.text = textOf(e);
    const bool window_only = windowFunctionKind(e.op, &w.call.kind);
    const auto* aggregates = reg.aggregate(e.op);
    if (!window_only && !aggregates) {
      if (reg.scalar(e.op)) throw BinderError(e.op_pos, e.op + "() is not a window function or an aggregate; it cannot take OVER");
      std::vector<std::string> names = {"row_number", "rank", "dense_rank", "lag", "lead", "first_value", "last_value", "zscore", "mad"};
      for (const std::string& n : reg.names()) names.push_back(n);
      throw BinderError(e.op_pos, "no window function '" + e.op + "'" + suggestion(e.op, names));
    }
    if (e.star_arg && e.op != "count") throw BinderError(e.op_pos, "only count(*) takes '*'");
    std::vector<BoundExprPtr> args;
    {
      FlagGuard guard(&in_window_, true);
      for (const auto& c : e.children) args.push_back(bindExpr(*c));
      for (const auto& p : e.window->partition_by) {
        BoundExprPtr b = bindExpr(*p);
        if (b->type == L::kHistogram) throw BinderError(p->pos, "cannot PARTITION BY a HISTOGRAM");
        w.partitions.push_back(std::move(b));
      }
      for (const OrderItem& o : e.window->order_by) {
        BoundExprPtr b = bindExpr(*o.expr);
        if (b->type == L::kHistogram) throw BinderError(o.expr->pos, "cannot ORDER BY a HISTOGRAM");
        w.orders.push_back(std::move(b));
        w.desc.push_back(o.desc);
        w.nulls_first.push_back(o.nulls == OrderItem::Nulls::kDefault ? o.desc : o.nulls == OrderItem::Nulls::kFirst);
      }
    }
    if (window_only) {
      bindWindowOnlyArgs(e, std::move(args), &w);
    } else {
      w.call.aggregate = resolveAggregate(e, *aggregates, args, &w.args, &w.call.constants);
      w.call.type = w.call.aggregate->ret;
    }
    if (e.window->has_frame) {
      w.frame = e.window->frame;
    } else if (w.orders.empty()) {
      w.frame = WindowFrame{FrameUnit::kRows, {FrameBoundKind::kUnboundedPreceding, 0, {}}, {FrameBoundKind::kUnboundedFollowing, 0, {}}};
    }
    if (w.frame.unit == FrameUnit::kRange) {
      for (const FrameBound* b : {&w.frame.start, &w.frame.end}) {
        if ((b->kind == FrameBoundKind::kPreceding || b->kind == FrameBoundKind::kFollowing) &&
            (w.orders.size() != 1 || !isNumeric(w.orders[0]->type))) {
          throw BinderError(b->pos, "a RANGE frame with an offset needs exactly one ORDER BY key of type BIGINT or DOUBLE");
        }
      }
    }
    const LogicalType type = w.call.type;
    size_t index = out_->windows.size();
    for (size_t i = 0; i < out_->windows.size(); ++i) {
      if (sameWindow(out_->windows[i], w)) {
        index = i;
        break;
      }
    }
    if (index == out_->windows.size()) out_->windows.push_back(std::move(w));
    return makeColumnRef(kWindowColumnBase + index, type, e.pos);
  }

  // Arguments of row_number, rank, dense_rank, lag, lead, first_value, last_value, zscore, mad.
  void bindWindowOnlyArgs(const ParsedExpr& e, std::vector<BoundExprPtr> args, BoundWindow* w) {
    using K = WindowFunctionKind;
    auto arity = [&](size_t lo, size_t hi, const char* shape) {
      if (args.size() < lo || args.size() > hi) throw BinderError(e.op_pos, e.op + "() takes " + shape);
    };
    auto constantArg = [&](size_t k, const char* what) -> const Value& {
      if (args[k]->kind != BoundExprKind::kConstant) throw BinderError(e.children[k]->pos, e.op + "(): " + what + " must be a constant");
      return args[k]->value;
    };
    switch (w->call.kind) {
      case K::kRowNumber:
      case K::kRank:
      case K::kDenseRank:
        arity(0, 0, "no arguments");
        w->call.type = L::kBigInt;
        return;
      case K::kLag:
      case K::kLead: {
        arity(1, 3, "(x[, offset[, default]])");
        LogicalType type = args[0]->type;
        int64_t offset = 1;
        if (args.size() >= 2) {
          const Value& v = constantArg(1, "the offset");
          if (v.type() != L::kBigInt || v.isNull() || v.bigintValue() < 0) {
            throw BinderError(e.children[1]->pos, e.op + "(): the offset must be a non-negative BIGINT constant, got " + v.toSql());
          }
          offset = v.bigintValue();
        }
        w->call.constants.push_back(Value::bigint(offset));
        if (args.size() == 3) {
          constantArg(2, "the default");
          // The result takes the wider type: lag(bigint_col, 1, 0.5) is a DOUBLE.
          if (type == L::kNull || (type == L::kBigInt && args[2]->type == L::kDouble)) type = args[2]->type;
          w->call.constants.push_back(coerce(std::move(args[2]), type)->value);
        }
        w->call.type = type;
        w->args.push_back(coerce(std::move(args[0]), type));
        return;
      }
      case K::kFirstValue:
      case K::kLastValue:
        arity(1, 1, "one argument");
        w->call.type = args[0]->type;
        w->args.push_back(std::move(args[0]));
        return;
      case K::kZscore:
      case K::kMad: {
        arity(1, 1, "one argument");
        if (args[0]->type == L::kNull) args[0] = coerce(std::move(args[0]), L::kDouble);
        if (!isNumeric(args[0]->type)) throw BinderError(e.op_pos, "no window function " + e.op + "(" + typeName(args[0]->type) + "); " + e.op + " takes (BIGINT) or (DOUBLE)");
        w->call.type = L::kDouble;
        w->args.push_back(std::move(args[0]));
        return;
      }
      case K::kAggregate: break;
    }
    throw BinderError(e.op_pos, "BUG: not a window-only function: " + e.op);
  }

  static bool sameWindow(const BoundWindow& a, const BoundWindow& b) {
    auto sameBound = [](const FrameBound& x, const FrameBound& y) { return x.kind == y.kind && x.offset == y.offset; };
    return a.call.kind == b.call.kind && a.call.aggregate == b.call.aggregate && a.call.constants == b.call.constants && a.call.type == b.call.type &&
           sameExprs(a.args, b.args) && sameExprs(a.partitions, b.partitions) && sameExprs(a.orders, b.orders) && a.desc == b.desc &&
           a.nulls_first == b.nulls_first && a.frame.unit == b.frame.unit && sameBound(a.frame.start, b.frame.start) &&
           sameBound(a.frame.end, b.frame.end);
  }

  static bool sameAggregate(const BoundAggregate& a, const BoundAggregate& b) {
    return a.function == b.function && a.distinct == b.distinct && a.constants == b.constants && sameExprs(a.args, b.args);
  }

  // --- functions and casts ---
  // Cost of passing arg where `to` is expected: 0 exact, higher for implicit casts, -1 none.
  static int castCost(const BoundExpr& arg, L to, bool any_to_varchar) {
    if (arg.type == to) return 0;
    if (arg.type == L::kNull) return 1;
    if (to == L::kHistogram || arg.type == L::kHistogram) return -1;
    if (arg.type == L::kBigInt && to == L::kDouble) return 1;
    bool constant = arg.kind == BoundExprKind::kConstant;
    if (constant && arg.type == L::kBigInt && to == L::kId && arg.value.bigintValue() >= 0) return 1;
    if (constant && arg.type == L::kVarchar && to != L::kVarchar) return 2;
    if (any_to_varchar && to == L::kVarchar) return 3;
    return -1;
  }

  BoundExprPtr makeCast(BoundExprPtr c, L to, SourcePos pos) {
    auto n = std::make_unique<BoundExpr>();
    n->kind = BoundExprKind::kCast;
    n->type = to;
    n->pos = pos;
    n->children.push_back(std::move(c));
    return n;
  }

  // Applies an implicit cast: constants are converted now (a literal that does not convert
  // is a type error of the query), other expressions get a cast node.
  BoundExprPtr coerce(BoundExprPtr e, L to) {
    if (e->type == to) return e;
    if (e->kind == BoundExprKind::kConstant) {
      Value v;
      std::string why;
      if (!tryCastValue(e->value, to, &v, &why)) {
        throw BinderError(e->pos, "cannot use " + e->value.toSql() + " as " + typeName(to) + ": " + why);
      }
      return makeConstant(std::move(v), e->pos);
    }
    SourcePos pos = e->pos;
    return makeCast(std::move(e), to, pos);
  }

  std::string signatures(const std::vector<AggregateFunction>& fns) const {
    std::string out = "; " + fns[0].name + " takes ";
    for (size_t i = 0; i < fns.size(); ++i) out += (i ? i + 1 == fns.size() ? " or " : ", " : "") + ("(" + joinTypes(fns[i].args) + ")");
    return out;
  }

  BoundExprPtr callScalar(const std::string& name, std::vector<BoundExprPtr> args, SourcePos pos, const std::string& shown) {
    const auto* candidates = FunctionRegistry::instance().scalar(name);
    const ScalarFunction* best = nullptr;
    int best_cost = -1;
    bool any_to_varchar = name == "||";
    for (const ScalarFunction& f : *candidates) {
      bool variadic = f.variadic != L::kNull;
      if (variadic ? args.size() < f.args.size() : args.size() != f.args.size()) continue;
      int cost = 0;
      for (size_t k = 0; k < args.size() && cost >= 0; ++k) {
        int c = castCost(*args[k], k < f.args.size() ? f.args[k] : f.variadic, any_to_varchar);
        cost = c < 0 ? -1 : cost + c;
      }
      if (cost >= 0 && (best == nullptr || cost < best_cost)) {
        best = &f;
        best_cost = cost;
      }
    }
    if (!best) {
      std::vector<L> types;
      for (const auto& a : args) types.push_back(a->type);
      if (isOperatorName(name) || shown == "LIKE" || shown == "BETWEEN" || shown == "CASE") {
        std::string what = types.size() == 1 ? typeName(types[0]) : std::string(typeName(types[0])) + " and " + typeName(types[1]);
        throw BinderError(pos, "no operator '" + shown + "' for " + what);
      }
      std::string takes;
      for (size_t i = 0; i < candidates->size(); ++i) {
        const ScalarFunction& f = (*candidates)[i];
        takes += (i ? i + 1 == candidates->size() ? " or " : ", " : "") + ("(" + joinTypes(f.args) + (f.variadic != L::kNull ? ", ..." : "") + ")");
      }
      throw BinderError(pos, "no function " + name + "(" + joinTypes(types) + "); " + name + " takes " + takes);
    }
    auto n = std::make_unique<BoundExpr>();
    n->kind = BoundExprKind::kFunction;
    n->type = best->ret;
    n->pos = pos;
    n->function = best;
    for (size_t k = 0; k < args.size(); ++k) n->children.push_back(coerce(std::move(args[k]), k < best->args.size() ? best->args[k] : best->variadic));
    return n;
  }

  BoundExprPtr requireBooleanOperand(BoundExprPtr e, const char* op) {
    if (e->type == L::kNull) return coerce(std::move(e), L::kBoolean);
    if (e->type != L::kBoolean) throw BinderError(e->pos, std::string(op) + " needs BOOLEAN operands, got " + typeName(e->type));
    return e;
  }

  BoundExprPtr makeLogical(BoundExprKind kind, BoundExprPtr l, BoundExprPtr r, SourcePos pos) {
    auto n = std::make_unique<BoundExpr>();
    n->kind = kind;
    n->type = L::kBoolean;
    n->pos = pos;
    n->children.push_back(std::move(l));
    n->children.push_back(std::move(r));
    return n;
  }

  BoundExprPtr makeNot(BoundExprPtr c, SourcePos pos) {
    auto n = std::make_unique<BoundExpr>();
    n->kind = BoundExprKind::kNot;
    n->type = L::kBoolean;
    n->pos = pos;
    n->children.push_back(std::move(c));
    return n;
  }

  // One type for CASE results and IN lists: the first non-literal's (else the first
  // literal's), widened from BIGINT to DOUBLE when needed; literals convert to it.
  L unify(const std::vector<BoundExprPtr*>& exprs, SourcePos pos, const char* what) {
    L target = L::kNull;
    for (int pass = 0; pass < 2 && target == L::kNull; ++pass) {
      for (BoundExprPtr* e : exprs) {
        bool constant = (*e)->kind == BoundExprKind::kConstant;
        if ((pass == 0) != constant && (*e)->type != L::kNull) {
          target = (*e)->type;
          break;
        }
      }
    }
    for (BoundExprPtr* e : exprs) {
      if ((*e)->type == L::kDouble && target == L::kBigInt) target = L::kDouble;
    }
    if (target == L::kNull) return target;
    for (BoundExprPtr* e : exprs) {
      if (castCost(**e, target, false) < 0) {
        throw BinderError((*e)->pos, std::string(what) + " mixes " + typeName(target) + " and " + typeName((*e)->type));
      }
      *e = coerce(std::move(*e), target);
    }
    (void)pos;
    return target;
  }

  std::string_view sql_;
  const CteScope* ctes_;
  uint32_t depth_;  // of this SELECT among the sources it is read from
  std::unique_ptr<BoundSelect> out_;
  const BoundSource* scope_ = nullptr;  // the columns names resolve to: the FROM's, or one join's while binding its ON
  std::string source_desc_ = "the query";
  bool aggregated_ = false;
  Mode mode_ = Mode::kSource;
  const char* clause_ = "the query";
  bool allow_aggregates_ = false;
  bool in_aggregate_ = false;
  bool allow_windows_ = false;
  bool in_window_ = false;
  std::unordered_map<const ParsedExpr*, bool> aggregate_call_, contains_aggregate_;
  size_t own_copied_nodes_ = 0;
  size_t* copied_nodes_ = &own_copied_nodes_;  // shared with the binders of subqueries
};

}  // namespace

std::unique_ptr<BoundSelect> bindSelect(const SelectStatement& statement, std::string_view sql) {
  return SelectBinder(sql, nullptr).bind(statement);
}

}  // namespace argus::query
