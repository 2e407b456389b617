/*
 * pqcount: a QEMU TCG plugin that counts the guest instructions executed
 * between two marker calls, exactly, and appends one line per region to a file.
 *
 * Marking, in the guest (an unstripped binary; symbols are looked up with
 * qemu_plugin_insn_symbol, which in linux-user mode knows the main
 * executable's .symtab only, so link statically to count libc too):
 *
 *     #[no_mangle] #[inline(never)] pub extern "C" fn pqprof_count_begin() { .. }
 *     #[no_mangle] #[inline(never)] pub extern "C" fn pqprof_count_end() { .. }
 *
 * The two bodies must differ (or LLVM's function merging / the linker's ICF
 * can fold them into one address and only one name survives).
 *
 * What is counted, per guest thread (vCPU), is every guest instruction that
 * the thread executes OUTSIDE the two marker functions after it enters
 * pqprof_count_begin and before it enters pqprof_count_end. The marker
 * functions' own instructions (their whole bodies, including their `ret`) are
 * never counted. So for
 *
 *     bl pqprof_count_begin
 *     <N instructions>
 *     bl pqprof_count_end
 *
 * the line written is N + 1: the N instructions plus the `bl` into
 * pqprof_count_end. Counting is exact: an inline 64-bit add per guest
 * instruction into a per-vCPU scoreboard (no sampling, no per-TB estimate,
 * so a TB left early still counts right; an instruction that faults is
 * counted once, as it is "executed" by QEMU before the fault is delivered).
 *
 * Regions may nest (up to 64 deep per thread); each `end` closes the innermost
 * open region and writes its count. Instructions of other threads are not in
 * a thread's region: open and close a region on the same thread.
 *
 * Arguments (-plugin ./libpqcount.so,out=PATH,begin=SYM,end=SYM):
 *   out=PATH    file to append one decimal count per line (default: stderr
 *               via qemu_plugin_outs). Opened O_APPEND; each line is one write.
 *   begin=SYM   begin marker symbol (default pqprof_count_begin)
 *   end=SYM     end marker symbol   (default pqprof_count_end)
 *   total=on    also report the whole run's instruction count per vCPU at exit
 *
 * At exit a summary goes to QEMU's log (stderr): regions written, and a
 * warning if a marker was never translated (stripped binary?) or regions were
 * left open or closed without being opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_DEPTH 64

typedef struct {
    uint64_t start[MAX_DEPTH];
    int depth;
    uint64_t regions;    /* lines written by this vCPU */
    uint64_t unmatched;  /* `end` with no open region */
    uint64_t overflow;   /* `begin` deeper than MAX_DEPTH */
} VcpuState;

static struct qemu_plugin_scoreboard *insn_sb; /* uint64_t per vCPU */
static qemu_plugin_u64 insn_count;
static struct qemu_plugin_scoreboard *state_sb; /* VcpuState per vCPU */

static const char *begin_sym = "pqprof_count_begin";
static const char *end_sym = "pqprof_count_end";
static int out_fd = -1;
static bool report_total;

/* Entry addresses of the markers, learned at translation time (see below). */
static GMutex lock;
static uint64_t begin_entry, end_entry;
static bool begin_seen, end_seen;

static void emit(const char *line)
{
    if (out_fd < 0) {
        qemu_plugin_outs(line);
        return;
    }
    size_t len = strlen(line);
    const char *p = line;
    while (len > 0) {
        ssize_t n = write(out_fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            qemu_plugin_outs("pqcount: write to out= file failed\n");
            return;
        }
        p += n;
        len -= n;
    }
}

static void on_begin(unsigned int vcpu, void *udata)
{
    VcpuState *s = qemu_plugin_scoreboard_find(state_sb, vcpu);
    if (s->depth >= MAX_DEPTH) {
        s->overflow++;
        return;
    }
    s->start[s->depth++] = qemu_plugin_u64_get(insn_count, vcpu);
}

static void on_end(unsigned int vcpu, void *udata)
{
    VcpuState *s = qemu_plugin_scoreboard_find(state_sb, vcpu);
    if (s->depth == 0) {
        s->unmatched++;
        return;
    }
    uint64_t n = qemu_plugin_u64_get(insn_count, vcpu) - s->start[--s->depth];
    char line[32];
    snprintf(line, sizeof line, "%" PRIu64 "\n", n);
    emit(line);
    s->regions++;
}

/*
 * A marker's entry is the address of the first instruction, carrying the
 * marker's symbol, of the first TB that contains any of the marker's
 * instructions: code reaches a function through a call or jump to its entry,
 * and a call ends the caller's TB, so the first TB translated for the marker
 * starts at its entry. Later TBs that start inside the marker (after a branch
 * within it, or a page-boundary split) are thereby not taken for new entries.
 */
static bool is_entry(const char *sym, uint64_t vaddr, const char *want, uint64_t *entry,
                     bool *seen)
{
    if (strcmp(sym, want) != 0) {
        return false;
    }
    g_mutex_lock(&lock);
    if (!*seen) {
        *seen = true;
        *entry = vaddr;
    }
    bool r = *entry == vaddr;
    g_mutex_unlock(&lock);
    return r;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const char *sym = qemu_plugin_insn_symbol(insn);
        if (sym && (strcmp(sym, begin_sym) == 0 || strcmp(sym, end_sym) == 0)) {
            uint64_t va = qemu_plugin_insn_vaddr(insn);
            if (is_entry(sym, va, begin_sym, &begin_entry, &begin_seen)) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_begin, QEMU_PLUGIN_CB_NO_REGS,
                                                       NULL);
            } else if (is_entry(sym, va, end_sym, &end_entry, &end_seen)) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS,
                                                       NULL);
            }
            continue; /* marker instructions are never counted */
        }
        qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                            insn_count, 1);
    }
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
    uint64_t regions = 0, unmatched = 0, overflow = 0, open = 0;
    int nv = qemu_plugin_num_vcpus();
    GString *msg = g_string_new(NULL);
    for (int i = 0; i < nv; i++) {
        VcpuState *s = qemu_plugin_scoreboard_find(state_sb, i);
        regions += s->regions;
        unmatched += s->unmatched;
        overflow += s->overflow;
        open += s->depth;
        if (report_total) {
            g_string_append_printf(msg, "pqcount: vcpu %d executed %" PRIu64
                                   " counted instructions\n", i,
                                   qemu_plugin_u64_get(insn_count, i));
        }
    }
    g_string_append_printf(msg, "pqcount: %" PRIu64 " regions written\n", regions);
    if (!begin_seen || !end_seen) {
        g_string_append_printf(msg, "pqcount: WARNING: marker %s%s%s never executed "
                               "(stripped binary, or markers inlined/merged?)\n",
                               begin_seen ? "" : begin_sym,
                               (!begin_seen && !end_seen) ? " and " : "",
                               end_seen ? "" : end_sym);
    }
    if (unmatched || overflow || open) {
        g_string_append_printf(msg, "pqcount: WARNING: %" PRIu64 " end without begin, %"
                               PRIu64 " begin past depth %d, %" PRIu64 " regions left open\n",
                               unmatched, overflow, MAX_DEPTH, open);
    }
    qemu_plugin_outs(msg->str);
    g_string_free(msg, true);
    if (out_fd >= 0) {
        close(out_fd);
    }
    qemu_plugin_scoreboard_free(insn_sb);
    qemu_plugin_scoreboard_free(state_sb);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *opt = argv[i];
        if (g_str_has_prefix(opt, "out=")) {
            out_fd = open(opt + 4, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (out_fd < 0) {
                fprintf(stderr, "pqcount: cannot open %s: %s\n", opt + 4, strerror(errno));
                return -1;
            }
        } else if (g_str_has_prefix(opt, "begin=")) {
            begin_sym = g_strdup(opt + 6);
        } else if (g_str_has_prefix(opt, "end=")) {
            end_sym = g_strdup(opt + 4);
        } else if (g_str_has_prefix(opt, "total=")) {
            if (!qemu_plugin_bool_parse("total", opt + 6, &report_total)) {
                fprintf(stderr, "pqcount: bad option %s\n", opt);
                return -1;
            }
        } else {
            fprintf(stderr, "pqcount: unknown option %s (want out=, begin=, end=, total=)\n",
                    opt);
            return -1;
        }
    }
    insn_sb = qemu_plugin_scoreboard_new(sizeof(uint64_t));
    insn_count = qemu_plugin_scoreboard_u64(insn_sb);
    state_sb = qemu_plugin_scoreboard_new(sizeof(VcpuState));
    qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
