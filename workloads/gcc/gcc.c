/*
 * gcc - stand-in for SPEC CPU2000 176.gcc: a compiler.  It compiles a generated program in a
 * small C-like language (functions, variables, if/else, counted loops, calls, integer
 * expressions) to stack-machine code, then runs it.
 *
 * The phases are a compiler's: a lexer, a recursive-descent parser building a heap-allocated
 * syntax tree, a symbol table per function (hashed), constant folding and algebraic
 * simplification on the tree, code generation with jump patching, and a peephole pass over
 * the code.  As in 176.gcc, the work is pointer-chasing over many small heap objects through
 * a large amount of branchy code, and the data grows with the source (--functions).
 * Check: every function, run on the VM from the optimised code, returns the same value as a
 * direct interpretation of the unoptimised syntax tree.
 */
#include "wl.h"

/* ---- source generation ---- */
static char *src;
static size_t srclen, srccap;
static wl_rng rng;

static void emit(const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(src + srclen, srccap - srclen, fmt, ap);
		va_end(ap);
		if ((size_t)k < srccap - srclen) {
			srclen += k;
			return;
		}
		srccap = 2 * srccap + 4096;
		src = realloc(src, srccap);
		if (!src)
			wl_die("out of memory");
	}
}

static const char *OPS[] = { "+", "-", "*", "/", "%", "<", "==", "&", "^", "|" };
static int nvars_gen, leaf_funcs = 8, cur_func;

static void gen_expr(int depth)
{
	int r = (int)wl_below(&rng, 10);
	if (depth == 0 || r < 3) {
		if (r & 1)
			emit("%d", (int)wl_below(&rng, 50));
		else
			emit("v%d", (int)wl_below(&rng, nvars_gen));
	} else if (r == 3 && cur_func >= leaf_funcs) {
		emit("f%d(", (int)wl_below(&rng, leaf_funcs));
		for (int a = 0; a < 3; a++) {
			if (a)
				emit(", ");
			gen_expr(depth - 1);
		}
		emit(")");
	} else {
		emit("(");
		gen_expr(depth - 1);
		emit(" %s ", OPS[wl_below(&rng, 10)]);
		gen_expr(depth - 1);
		emit(")");
	}
}

static void gen_block(int depth, int stmts)
{
	for (int s = 0; s < stmts; s++) {
		int r = (int)wl_below(&rng, 10);
		if (depth > 0 && r == 0) {
			emit("if ("); gen_expr(2); emit(") {\n");
			gen_block(depth - 1, 2);
			emit("} else {\n");
			gen_block(depth - 1, 2);
			emit("}\n");
		} else if (depth > 0 && r == 1) {
			emit("repeat %d {\n", 1 + (int)wl_below(&rng, 4));
			gen_block(depth - 1, 2);
			emit("}\n");
		} else if (r == 2 && nvars_gen < 12) {
			emit("var v%d = ", nvars_gen); gen_expr(3); emit(";\n");
			nvars_gen++;
		} else {
			emit("v%d = ", (int)wl_below(&rng, nvars_gen)); gen_expr(3); emit(";\n");
		}
	}
}

static void gen_program(int funcs)
{
	for (cur_func = 0; cur_func < funcs; cur_func++) {
		emit("func f%d(v0, v1, v2) {\n", cur_func);
		nvars_gen = 3;
		gen_block(cur_func < leaf_funcs ? 1 : 3, cur_func < leaf_funcs ? 3 : 8);
		emit("return "); gen_expr(3); emit(";\n}\n");
	}
}

/* ---- lexer ---- */
enum { T_EOF, T_NUM, T_ID, T_FUNC, T_VAR, T_IF, T_ELSE, T_REPEAT, T_RETURN, T_PUNCT };
static const char *lp;
static int tok, tnum, line = 1;
static char tid[32], tpunct[3];
static long long tokens;

static void next(void)
{
	while (*lp == ' ' || *lp == '\n' || *lp == '\t')
		line += *lp++ == '\n';
	tokens++;
	if (!*lp) { tok = T_EOF; return; }
	if (*lp >= '0' && *lp <= '9') {
		tnum = 0;
		while (*lp >= '0' && *lp <= '9')
			tnum = tnum * 10 + (*lp++ - '0');
		tok = T_NUM;
		return;
	}
	if ((*lp >= 'a' && *lp <= 'z') || *lp == '_') {
		int k = 0;
		while (((*lp >= 'a' && *lp <= 'z') || (*lp >= '0' && *lp <= '9') || *lp == '_') && k < 31)
			tid[k++] = *lp++;
		tid[k] = 0;
		tok = !strcmp(tid, "func") ? T_FUNC : !strcmp(tid, "var") ? T_VAR : !strcmp(tid, "if") ? T_IF
			: !strcmp(tid, "else") ? T_ELSE : !strcmp(tid, "repeat") ? T_REPEAT
			: !strcmp(tid, "return") ? T_RETURN : T_ID;
		return;
	}
	tpunct[0] = *lp++;
	tpunct[1] = 0;
	if (tpunct[0] == '=' && *lp == '=') {
		tpunct[1] = *lp++;
		tpunct[2] = 0;
	}
	if (!strchr("(){},;=+-*/%<&^|", tpunct[0]))
		wl_die("line %d: unexpected character '%c'", line, tpunct[0]);
	tok = T_PUNCT;
}

static int is(const char *p) { return tok == T_PUNCT && !strcmp(tpunct, p); }
static void expect(const char *p)
{
	if (!is(p))
		wl_die("line %d: expected '%s'", line, p);
	next();
}

/* ---- syntax tree ---- */
enum { N_NUM, N_VAR, N_BIN, N_CALL, N_ASSIGN, N_IF, N_REPEAT, N_RETURN, N_SEQ };
struct node {
	int kind, op, val;      /* op: index into OPS; val: number, var slot, callee, count */
	struct node *a, *b, *c, *next;
};
static long long nodes_made;

static struct node *mk(int kind, int op, int val, struct node *a, struct node *b)
{
	struct node *n = calloc(1, sizeof *n);
	if (!n)
		wl_die("out of memory");
	n->kind = kind; n->op = op; n->val = val; n->a = a; n->b = b;
	nodes_made++;
	return n;
}

/* Symbol table: a small open-addressing hash per function. */
static struct { char name[32]; int slot; } sym[64];
static int nslots, nfuncs_parsed;

static int lookup(const char *name, int define)
{
	unsigned h = (unsigned)wl_fnv(WL_FNV_INIT, name, strlen(name)) & 63;
	while (sym[h].name[0] && strcmp(sym[h].name, name))
		h = (h + 1) & 63;
	if (!sym[h].name[0]) {
		if (!define)
			wl_die("line %d: undeclared variable '%s'", line, name);
		snprintf(sym[h].name, sizeof sym[h].name, "%s", name);
		sym[h].slot = nslots++;
	}
	return sym[h].slot;
}

static struct node *expr(void);

static struct node *primary(void)
{
	if (tok == T_NUM) { struct node *n = mk(N_NUM, 0, tnum, 0, 0); next(); return n; }
	if (tok == T_ID && tid[0] == 'f') {
		int callee = atoi(tid + 1);
		if (callee >= nfuncs_parsed)
			wl_die("line %d: call of undefined function f%d", line, callee);
		next(); expect("(");
		struct node *args = expr(), *last = args;
		for (int k = 1; k < 3; k++) { expect(","); last = last->next = expr(); }
		expect(")");
		return mk(N_CALL, 0, callee, args, 0);
	}
	if (tok == T_ID) { struct node *n = mk(N_VAR, 0, lookup(tid, 0), 0, 0); next(); return n; }
	expect("(");
	struct node *l = expr();
	int op = -1;
	for (int k = 0; k < 10; k++)
		if (is(OPS[k]))
			op = k;
	if (op < 0)
		wl_die("line %d: expected an operator", line);
	next();
	struct node *r = expr();
	expect(")");
	return mk(N_BIN, op, 0, l, r);
}
static struct node *expr(void) { return primary(); }

static struct node *block(void)
{
	struct node head = { 0 }, *tail = &head;
	expect("{");
	while (!is("}")) {
		struct node *s;
		if (tok == T_IF) {
			next(); expect("(");
			struct node *c = expr();
			expect(")");
			struct node *t = block();
			if (tok != T_ELSE)
				wl_die("line %d: expected else", line);
			next();
			s = mk(N_IF, 0, 0, c, t);
			s->c = block();
		} else if (tok == T_REPEAT) {
			next();
			if (tok != T_NUM)
				wl_die("line %d: repeat wants a count", line);
			int count = tnum;
			next();
			s = mk(N_REPEAT, 0, count, block(), 0);
			s->val = count;
			s->op = nslots++; /* hidden counter variable */
		} else if (tok == T_RETURN) {
			next(); s = mk(N_RETURN, 0, 0, expr(), 0); expect(";");
		} else {
			int define = tok == T_VAR;
			if (define) next();
			if (tok != T_ID)
				wl_die("line %d: expected a statement", line);
			int slot = lookup(tid, define);
			next(); expect("=");
			s = mk(N_ASSIGN, 0, slot, expr(), 0); expect(";");
		}
		tail = tail->next = s;
	}
	next();
	return mk(N_SEQ, 0, 0, head.next, 0);
}

/* ---- semantics shared by the tree interpreter, the folder and the VM ---- */
static int64_t binop(int op, int64_t x, int64_t y)
{
	uint64_t a = (uint64_t)x, b = (uint64_t)y;
	switch (op) {
	case 0: return (int64_t)(a + b);
	case 1: return (int64_t)(a - b);
	case 2: return (int64_t)(a * b);
	case 3: return b ? (int64_t)(a / b) : 0;
	case 4: return b ? (int64_t)(a % b) : 0;
	case 5: return x < y;
	case 6: return x == y;
	case 7: return x & y;
	case 8: return x ^ y;
	default: return x | y;
	}
}

struct func { struct node *body; int slots; int code_at; };
static struct func *funcs;

static int64_t run_tree(struct node *n, int64_t *v, int *returned);
static int64_t call_tree(int f, int64_t a0, int64_t a1, int64_t a2)
{
	int64_t v[64] = { a0, a1, a2 };
	int ret = 0;
	return run_tree(funcs[f].body, v, &ret);
}

static int64_t run_tree(struct node *n, int64_t *v, int *returned)
{
	switch (n->kind) {
	case N_NUM: return n->val;
	case N_VAR: return v[n->val];
	case N_BIN: return binop(n->op, run_tree(n->a, v, returned), run_tree(n->b, v, returned));
	case N_CALL: {
		int64_t a0 = run_tree(n->a, v, returned), a1 = run_tree(n->a->next, v, returned);
		return call_tree(n->val, a0, a1, run_tree(n->a->next->next, v, returned));
	}
	case N_ASSIGN: v[n->val] = run_tree(n->a, v, returned); return 0;
	case N_IF: return run_tree(run_tree(n->a, v, returned) ? n->b : n->c, v, returned);
	case N_REPEAT:
		for (int k = 0; k < n->val && !*returned; k++) {
			int64_t r = run_tree(n->a, v, returned);
			if (*returned)
				return r;
		}
		return 0;
	case N_RETURN: { int64_t r = run_tree(n->a, v, returned); *returned = 1; return r; }
	default:
		for (struct node *s = n->a; s; s = s->next) {
			int64_t r = run_tree(s, v, returned);
			if (*returned)
				return r;
		}
		return 0;
	}
}

/* ---- optimiser: fold constants, simplify x+0, x*1, x*0, x-0, x|0, x^0 ---- */
static long long folds;
static struct node *fold(struct node *n)
{
	if (!n)
		return n;
	if (n->kind == N_BIN) {
		n->a = fold(n->a);
		n->b = fold(n->b);
		if (n->a->kind == N_NUM && n->b->kind == N_NUM) {
			int64_t r = binop(n->op, n->a->val, n->b->val);
			if (r >= INT32_MIN && r <= INT32_MAX) {
				folds++;
				return mk(N_NUM, 0, (int)r, 0, 0);
			}
		}
		if (n->b->kind == N_NUM && ((n->b->val == 0 && (n->op == 0 || n->op == 1 || n->op == 8 || n->op == 9))
					    || (n->b->val == 1 && (n->op == 2 || n->op == 3)))) {
			folds++;
			return n->a;
		}
		return n;
	}
	struct node *next = n->next;
	n->a = n->kind == N_CALL ? n->a : fold(n->a);
	if (n->kind == N_CALL) {
		struct node **p = &n->a;
		while (*p) {
			struct node *nx = (*p)->next;
			*p = fold(*p);
			(*p)->next = nx;
			p = &(*p)->next;
		}
	}
	n->b = fold(n->b);
	n->c = fold(n->c);
	if (n->kind == N_SEQ) {
		struct node **p = &n->a;
		while (*p) {
			struct node *nx = (*p)->next;
			*p = fold(*p);
			(*p)->next = nx;
			p = &(*p)->next;
		}
	}
	n->next = next;
	return n;
}

/* ---- code generation for a stack machine ---- */
enum { I_PUSH, I_LOAD, I_STORE, I_BIN, I_JZ, I_JMP, I_CALL, I_RET, I_DEC, I_NOP };
struct ins { int op, arg; };
static struct ins *code;
static int ncode, codecap;

static int put(int op, int arg)
{
	if (ncode == codecap) {
		codecap = codecap ? 2 * codecap : 1024;
		code = realloc(code, codecap * sizeof *code);
		if (!code)
			wl_die("out of memory");
	}
	code[ncode].op = op;
	code[ncode].arg = arg;
	return ncode++;
}

static void gen(struct node *n)
{
	switch (n->kind) {
	case N_NUM: put(I_PUSH, n->val); break;
	case N_VAR: put(I_LOAD, n->val); break;
	case N_BIN: gen(n->a); gen(n->b); put(I_BIN, n->op); break;
	case N_CALL: for (struct node *a = n->a; a; a = a->next) gen(a); put(I_CALL, n->val); break;
	case N_ASSIGN: gen(n->a); put(I_STORE, n->val); break;
	case N_IF: {
		gen(n->a);
		int jz = put(I_JZ, 0);
		gen(n->b);
		int jmp = put(I_JMP, 0);
		code[jz].arg = ncode;
		gen(n->c);
		code[jmp].arg = ncode;
		break;
	}
	case N_REPEAT: {
		put(I_PUSH, n->val); put(I_STORE, n->op);
		int top = put(I_LOAD, n->op), jz = put(I_JZ, 0);
		gen(n->a);
		put(I_DEC, n->op); put(I_JMP, top);
		code[jz].arg = ncode;
		break;
	}
	case N_RETURN: gen(n->a); put(I_RET, 0); break;
	default: for (struct node *s = n->a; s; s = s->next) gen(s);
	}
}

/* Peephole: a jump to a jump goes straight to the final target. */
static long long peeps;
static void peephole(int from)
{
	for (int i = from; i < ncode; i++)
		if (code[i].op == I_JMP || code[i].op == I_JZ)
			while (code[code[i].arg].op == I_JMP && code[code[i].arg].arg != code[i].arg) {
				code[i].arg = code[code[i].arg].arg;
				peeps++;
			}
}

static long long executed;
static int64_t vm(int f, int64_t a0, int64_t a1, int64_t a2)
{
	int64_t v[64] = { a0, a1, a2 }, st[64];
	int sp = 0;
	for (int pc = funcs[f].code_at;; pc++) {
		struct ins in = code[pc];
		executed++;
		switch (in.op) {
		case I_PUSH: st[sp++] = in.arg; break;
		case I_LOAD: st[sp++] = v[in.arg]; break;
		case I_STORE: v[in.arg] = st[--sp]; break;
		case I_BIN: sp--; st[sp - 1] = binop(in.arg, st[sp - 1], st[sp]); break;
		case I_JZ: if (!st[--sp]) pc = in.arg - 1; break;
		case I_JMP: pc = in.arg - 1; break;
		case I_DEC: v[in.arg]--; break;
		case I_CALL: sp -= 2; st[sp - 1] = vm(in.arg, st[sp - 1], st[sp], st[sp + 1]); break;
		case I_RET: return st[sp - 1];
		default: break;
		}
		if (sp >= 60)
			wl_fail("VM stack overflow in f%d", f);
	}
}

int main(int argc, char **argv)
{
	wl_prog = "gcc";
	int nf = 200, passes = 1;
	WL_OPTS(argc, argv) {
		if (WL_IS("--functions")) nf = (int)wl_int("--functions", WL_VAL, 9, 1000000);
		else if (WL_IS("--passes")) passes = (int)wl_int("--passes", WL_VAL, 1, 10000);
		else WL_BAD();
	}
	rng = wl_seed(176);
	gen_program(nf);
	uint64_t h = WL_FNV_INIT;
	double t0 = wl_now();
	for (int pass = 0; pass < passes; pass++) {
		funcs = calloc(nf, sizeof *funcs);
		ncode = 0;
		lp = src;
		line = 1;
		nfuncs_parsed = 0;
		next();
		while (tok == T_FUNC) {
			next();
			memset(sym, 0, sizeof sym);
			nslots = 0;
			if (tok != T_ID) wl_die("line %d: expected a function name", line);
			next(); expect("(");
			lookup("v0", 1); next(); expect(",");
			lookup("v1", 1); next(); expect(",");
			lookup("v2", 1); next(); expect(")");
			struct func *fn = &funcs[nfuncs_parsed];
			fn->body = block();
			fn->slots = nslots;
			if (nslots > 60)
				wl_die("f%d uses too many variables", nfuncs_parsed);
			nfuncs_parsed++;
		}
		if (tok != T_EOF)
			wl_die("line %d: expected 'func'", line);
		/* Reference results from the unoptimised tree, then optimise, compile and run. */
		int64_t *want = malloc(sizeof(int64_t) * nf);
		for (int f = 0; f < nf; f++)
			want[f] = call_tree(f, f, 7 * f + 1, 3);
		for (int f = 0; f < nf; f++) {
			funcs[f].body = fold(funcs[f].body);
			funcs[f].code_at = ncode;
			gen(funcs[f].body);
			put(I_PUSH, 0);
			put(I_RET, 0);
			peephole(funcs[f].code_at);
		}
		for (int f = 0; f < nf; f++) {
			int64_t got = vm(f, f, 7 * f + 1, 3);
			if (got != want[f])
				wl_fail("f%d: compiled code returns %lld, the tree says %lld", f,
					(long long)got, (long long)want[f]);
			h = wl_fnv(h, &got, sizeof got);
		}
		free(want);
		free(funcs); /* the trees are leaked deliberately: compilers rarely free them */
	}
	double dt = wl_now() - t0;
	printf("functions=%d\nsource_bytes=%zu\ntokens=%lld\nnodes=%lld\nfolds=%lld\n", nf, srclen,
	       tokens, nodes_made, folds);
	printf("code_size=%d\nexecuted=%lld\n", ncode, executed);
	wl_hex("checksum", h);
	printf("seconds=%.6f\n", dt);
	return 0;
}
