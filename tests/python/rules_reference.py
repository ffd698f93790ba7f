"""A Python reference of access rules as docs/RULES.md documents them: variable
substitution for a caller, a small MongoDB-filter matcher (equality with
arrays-contain and null-matches-missing, $in, $nin, $ne, $or, $and, $nor,
$exists, $gt/$gte/$lt/$lte, dotted paths), and the expected status of each
operation. The rule tests (test_rules.py) compare the daemon with it."""

from dataclasses import dataclass, field

# What `@caller.id` stands for when nobody is signed in: a value no document holds.
NOBODY = object()
MISSING = object()


@dataclass(frozen=True)
class Caller:
    """Who asks: `id` None for anonymous; `admin` for the admin token."""
    name: str
    id: str | None = None
    roles: tuple = ()
    admin: bool = False

    @property
    def signed_in(self):
        return self.id is not None or self.admin

    @property
    def anonymous(self):
        return self.id is None and not self.admin

    @property
    def principals(self):
        return ([self.id] if self.id else []) + [f"role:{r}" for r in self.roles]


@dataclass
class RuleSet:
    """A collection's rules (None: the level decides) and its level."""
    level: str = "shared"
    read: dict | None = None
    create: dict | None = None
    update: dict | None = None
    delete: dict | None = None
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Variables

def variable(name, caller, previous, now):
    if name == "@caller.id":
        return caller.id if caller.id is not None else NOBODY
    if name == "@caller.roles":
        return list(caller.roles) if caller.id is not None else []
    if name == "@caller.principals":
        return caller.principals
    if name == "@caller.signedIn":
        return caller.signed_in
    if name == "@caller.admin":
        return caller.admin
    if name == "@now":
        return now
    if name.startswith("@previous."):
        value = lookup(previous or {}, name[len("@previous."):])
        return None if value is MISSING else value
    raise ValueError(f"not a variable: {name}")


def substitute(value, caller, previous=None, now=""):
    """The rule with its variables replaced; a caller condition (a key that is a
    variable) is decided here: true drops out, false makes the whole object never match."""
    if isinstance(value, str) and value.startswith("@@"):
        return value[1:]
    if isinstance(value, str) and value.startswith("@"):
        return variable(value, caller, previous, now)
    if isinstance(value, list):
        return [substitute(v, caller, previous, now) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, member in value.items():
            resolved = substitute(member, caller, previous, now)
            if key.startswith("@"):
                subject = variable(key, caller, previous, now)
                if not condition_holds(subject, resolved):
                    return {"$nor": [{}]}
                continue
            out[key] = resolved
        return out
    return value


# ---------------------------------------------------------------------------------------------
# The matcher

def lookup(doc, path):
    current = doc
    for key in path.split("."):
        if isinstance(current, dict) and key in current:
            current = current[key]
        else:
            return MISSING
    return current


def same(a, b):
    if a is NOBODY or b is NOBODY:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def equals(value, wanted):
    """Equality as queries have it: null matches a missing field, an array contains."""
    if wanted is None and (value is MISSING or value is None):
        return True
    if value is MISSING:
        return False
    if same(value, wanted):
        return True
    return isinstance(value, list) and not isinstance(wanted, list) and any(same(v, wanted) for v in value)


def compare(value, op, bound):
    candidates = value if isinstance(value, list) else [value]
    for v in candidates:
        if v is MISSING or bound is NOBODY:
            continue
        comparable = (isinstance(v, str) and isinstance(bound, str)) or (
            isinstance(v, (int, float)) and isinstance(bound, (int, float))
            and not isinstance(v, bool) and not isinstance(bound, bool))
        if comparable and {"$gt": v > bound, "$gte": v >= bound, "$lt": v < bound, "$lte": v <= bound}[op]:
            return True
    return False


def condition_holds(value, cond):
    if isinstance(cond, dict) and cond and all(k.startswith("$") for k in cond):
        for op, arg in cond.items():
            if op == "$in":
                if not any(equals(value, a) for a in arg):
                    return False
            elif op == "$nin":
                if any(equals(value, a) for a in arg):
                    return False
            elif op == "$ne":
                if equals(value, arg):
                    return False
            elif op == "$exists":
                if (value is not MISSING) != bool(arg):
                    return False
            elif op in ("$gt", "$gte", "$lt", "$lte"):
                if not compare(value, op, arg):
                    return False
            else:
                raise ValueError(f"the reference has no {op}")
        return True
    return equals(value, cond)


def matches(flt, doc):
    for key, cond in flt.items():
        if key == "$or":
            if not any(matches(f, doc) for f in cond):
                return False
        elif key == "$and":
            if not all(matches(f, doc) for f in cond):
                return False
        elif key == "$nor":
            if any(matches(f, doc) for f in cond):
                return False
        elif not condition_holds(lookup(doc, key), cond):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Levels and operations

def level_reads(level, caller, doc):
    if caller.admin or level == "public":
        return True
    if caller.anonymous:
        return False
    if level in ("shared", "readonly"):
        return True
    acl = doc.get("_acl", {})
    return acl.get("creator") == caller.id or any(p in acl.get(k, []) for k in ("read", "write") for p in caller.principals)


def level_writes(level, caller, doc):
    if caller.admin or level == "public":
        return True
    if caller.anonymous or level == "readonly":
        return False
    acl = doc.get("_acl", {})
    return acl.get("creator") == caller.id or any(p in acl.get("write", []) for p in caller.principals)


def visible(rules, caller, doc, now=""):
    """Whether `caller` sees the stored `doc` at all."""
    if caller.admin:
        return True
    if rules.read is None:
        return level_reads(rules.level, caller, doc)
    return matches(substitute(rules.read, caller, None, now), doc)


def may_create(rules, caller, doc, now=""):
    if caller.admin:
        return True
    if rules.create is None:
        return rules.level == "public" or (caller.signed_in and rules.level != "readonly")
    return matches(substitute(rules.create, caller, None, now), doc)


def may_update(rules, caller, stored, new, now=""):
    if caller.admin:
        return True
    if rules.update is None:
        return level_writes(rules.level, caller, stored)
    return all(matches(substitute(rules.update, caller, stored, now), d) for d in (stored, new))


def may_delete(rules, caller, stored, now=""):
    if caller.admin:
        return True
    if rules.delete is None:
        return level_writes(rules.level, caller, stored)
    return matches(substitute(rules.delete, caller, None, now), stored)


def refused(caller):
    """The status of a write a rule (or level) refuses."""
    return 401 if caller.anonymous else 403


def write_status(rules, caller, op, stored, new=None, etag_ok=True, now=""):
    """The documented order: hidden → 404; a failed If-Match → 412; the rule → 401/403; else 200."""
    if stored is None or not visible(rules, caller, stored, now):
        return 404
    # Without a rule for the operation the level decides, when the row is read (before If-Match).
    if getattr(rules, "delete" if op == "DELETE" else "update") is None and not caller.admin and \
            not level_writes(rules.level, caller, stored):
        return refused(caller)
    if not etag_ok:
        return 412
    allowed = may_delete(rules, caller, stored, now) if op == "DELETE" else may_update(rules, caller, stored, new, now)
    return 200 if allowed else refused(caller)


def merge_patch(doc, patch):
    out = dict(doc)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict) and not k.startswith("_"):
            out[k] = merge_patch(out[k], v)
        else:
            out[k] = v
    return out


def replaced(stored, body):
    """A PUT's document as it would be stored: the body with the stored system fields."""
    out = {k: v for k, v in stored.items() if k.startswith("_")}
    out.update(body)
    return out
