/* --broken-graph's probes: a graph planted broken to show that the
 * runtime's checks catch it. A definition the compile must refuse (a
 * cycle, a dangling port, an interpolation outside the argument block: exit
 * 2), or a valid graph whose op launches inside the subgraph, breaking the
 * contract (exit 1). */
#include <string.h>

#include "subgraph.h"

static void nothing_task(const void *args, size_t size, const sg_task_ctx *ctx) { (void)args, (void)size, (void)ctx; }

/* Breaks the contract: launches from inside a subgraph op. */
static void launcher_task(const void *args, size_t size, const sg_task_ctx *ctx) {
  (void)args, (void)size;
  sg_event child;
  sg_launch_task(ctx->rt, "child", nothing_task, NULL, 0, NULL, 0, &child); /* fails at the call */
}

/* A valid graph whose op launches: the run fails (exit 1) naming both. */
static int run_contract_violation(sg_runtime *rt) {
  sg_op_def op = {.name = "launcher", .kind = SG_OP_TASK, .affinity = -1, .fn = launcher_task};
  sg_graph_def def = {.name = "contract", .ops = &op, .nops = 1};
  sg_subgraph *sg = NULL;
  sg_event finish;
  int status = sg_subgraph_create(rt, &def, &sg);
  if (status == MAPP_OK) status = sg_subgraph_compile(sg);
  if (status == MAPP_OK) status = sg_subgraph_instantiate(sg, NULL, 0, SG_NO_EVENT, NULL, NULL, &finish);
  if (status == MAPP_OK) status = sg_event_wait(rt, finish);
  if (status == MAPP_OK) status = sg_runtime_status(rt);
  sg_subgraph_destroy(sg);
  return status;
}

int subgraph_compile_broken(const char *kind) {
  sg_runtime *rt;
  sg_config rc = {.workers = 1, .spin_us = 0};
  MAPP_TRY(sg_runtime_create(&rc, &rt));
  if (!strcmp(kind, "contract")) {
    int status = run_contract_violation(rt);
    sg_runtime_destroy(rt);
    return status == MAPP_OK ? mapp_fail(MAPP_ERR_SYSTEM, "the contract violation went unnoticed") : status;
  }
  long arg = 0;
  sg_op_def ops[3] = {
      {.name = "a", .kind = SG_OP_TASK, .affinity = -1, .fn = nothing_task, .args = &arg, .arg_size = sizeof arg},
      {.name = "b", .kind = SG_OP_TASK, .affinity = -1, .fn = nothing_task, .args = &arg, .arg_size = sizeof arg},
      {.name = "c", .kind = SG_OP_TASK, .affinity = -1, .fn = nothing_task, .args = &arg, .arg_size = sizeof arg}};
  sg_edge_def chain[3] = {{0, 1}, {1, 2}, {2, 1}};
  sg_port_edge pre[1] = {{.port = 0, .op = 0}};
  sg_interp_def interp = {.arg_offset = 4, .size = 8, .op = 0, .op_offset = 0};
  sg_graph_def def = {.name = kind, .ops = ops, .nops = 3, .edges = chain, .nedges = 2, .arg_size = 8};
  if (!strcmp(kind, "cycle")) def.nedges = 3;
  else if (!strcmp(kind, "dangling-port")) def.npre_ports = 2, def.pre_edges = pre, def.npre_edges = 1;
  else def.interps = &interp, def.ninterps = 1;
  sg_subgraph *sg = NULL;
  int status = sg_subgraph_create(rt, &def, &sg);
  if (status == MAPP_OK) status = sg_subgraph_compile(sg);
  sg_subgraph_destroy(sg);
  sg_runtime_destroy(rt);
  return status == MAPP_OK ? mapp_fail(MAPP_ERR_SYSTEM, "the broken '%s' definition compiled", kind) : status;
}
