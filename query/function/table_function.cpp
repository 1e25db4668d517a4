#include "query/function/table_function.h"

#include "query/common/suggestion.h"

namespace argus::query {

namespace {

// The implicit conversions of a function argument (language.md, "Types"); false if none.
bool convertArgument(const Value& v, LogicalType to, Value* out) {
  if (v.type() == to) {
    *out = v;
  } else if (v.isNull()) {
    *out = Value::null(to);
  } else if (v.type() == LogicalType::kBigInt && to == LogicalType::kDouble) {
    *out = Value::dbl(static_cast<double>(v.bigintValue()));
  } else if (v.type() == LogicalType::kBigInt && to == LogicalType::kId && v.bigintValue() >= 0) {
    *out = Value::id(static_cast<uint64_t>(v.bigintValue()));
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string TableFunction::signature() const {
  std::string out = name_ + "(";
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const TableFunctionParameter& p = parameters_[i];
    out += (i ? ", " : "") + p.name + " " + typeName(p.type);
    if (!p.required) out += " = " + p.default_value.toSql();
  }
  return out + ")";
}

TableFunctionArguments matchArguments(const TableFunction& f, const std::vector<TableFunctionArgument>& given, SourcePos call_pos) {
  const auto& params = f.parameters();
  auto fail = [&](SourcePos pos, const std::string& what) -> BinderError {
    return BinderError(pos, f.name() + "(): " + what + " (" + f.signature() + ")");
  };
  std::vector<const TableFunctionArgument*> slot(params.size(), nullptr);
  size_t positional = 0;
  for (const TableFunctionArgument& a : given) {
    size_t i = 0;
    if (a.name.empty()) {
      if (positional >= params.size()) {
        throw fail(a.pos, "too many arguments: it takes " + std::to_string(params.size()));
      }
      i = positional++;
    } else {
      while (i < params.size() && params[i].name != a.name) ++i;
      if (i == params.size()) {
        std::vector<std::string> names;
        for (const TableFunctionParameter& p : params) names.push_back(p.name);
        std::string hint = suggestion(a.name, names);
        throw BinderError(a.pos, f.name() + "(): no parameter '" + a.name + "'" + hint + " (" + f.signature() + ")");
      }
      if (slot[i]) throw fail(a.pos, "parameter '" + a.name + "' is given twice");
    }
    slot[i] = &a;
  }
  TableFunctionArguments out;
  out.call_pos = call_pos;
  for (size_t i = 0; i < params.size(); ++i) {
    const TableFunctionParameter& p = params[i];
    if (!slot[i]) {
      if (p.required) throw fail(call_pos, "missing required argument '" + p.name + "'");
      out.values.push_back(p.default_value.isNull() ? Value::null(p.type) : p.default_value);
      out.positions.push_back(call_pos);
      continue;
    }
    Value v;
    if (!convertArgument(slot[i]->value, p.type, &v)) {
      throw fail(slot[i]->pos, "argument '" + p.name + "' must be " + typeName(p.type) + ", got " + typeName(slot[i]->value.type()) + " " +
                                   slot[i]->value.toSql());
    }
    out.values.push_back(std::move(v));
    out.positions.push_back(slot[i]->pos);
  }
  return out;
}

}  // namespace argus::query
