#!/bin/bash
# mapp submit with a Slurm environment: the dry run prints one script per
# configuration with the directives, modules, variables and srun lines and
# writes nothing; a real submission (through stand-in sbatch and srun that
# run the script here) records job ids, and collect gathers the records.
. "$(dirname "$0")/lib.sh"
require_app heat
SLURM_ENV="$MAPP_SOURCE_DIR/envs/slurm-example.yaml"
cat >small.yaml <<'YAML'
name: batch
repetitions: 2
runs:
  - app: heat
    variants: [mpi]
    backends: [serial]
    ranks: [1, 2]
    threads: [1]
    sizes: [tiny]
    scaling: weak
  - app: heat
    ranks: [96]
    threads: [2]
    backends: [serial, cuda]
YAML

expect_exit 0 "$MAPP" submit small.yaml --env "$SLURM_ENV" --dry-run
expect_output "#!/bin/bash"
expect_output "#SBATCH --partition=compute"
expect_output "#SBATCH --time=00:30:00"
expect_output "#SBATCH --ntasks=2"
expect_output "#SBATCH --cpus-per-task=1"
expect_output "#SBATCH --exclusive"
expect_output "module load openmpi/4.1"
expect_output "export OMP_NUM_THREADS=1"
expect_output "export OMP_PROC_BIND=close"
expect_output "srun -n 2 --cpu-bind=cores $MAPP_BIN_DIR/mapp-heat --variant mpi --backend serial --size tiny --scaling weak"
expect_output "heat-mpi-serial-tiny-weak-n2-t1-r1.json"
# 96 ranks x 2 threads on 64-core nodes: 3 nodes
grep -A12 'heat-mpi-serial-tiny-strong-n96-t2.sbatch' <<<"$OUT" | grep -q '#SBATCH --nodes=3' || fail "nodes for 96x2 on 64 cores"
expect_output "dry run: 3 batch scripts for batch (2 repetitions each unless its entry says otherwise)"
[ ! -e results ] || fail "the dry run wrote files"

expect_exit 2 "$MAPP" submit small.yaml --dry-run
expect_output "needs --env"
expect_exit 2 "$MAPP" submit small.yaml --env "$MAPP_SOURCE_DIR/envs/local.yaml" --dry-run
expect_output "has no batch scheduler"

# Stand-ins: sbatch runs the script at once and prints an id; srun -n N is mpirun.
mkdir bin
cat >bin/sbatch <<'SH'
#!/bin/bash
[ "$1" = --parsable ] || exit 9
bash "$2" >/dev/null 2>&1
echo "$((4000 + RANDOM % 1000));testcluster"
SH
cat >bin/srun <<'SH'
#!/bin/bash
[ "$1" = -n ] || exit 9
n=$2
shift 2
[ "$1" = --cpu-bind=cores ] && shift
exec mpirun -np "$n" --oversubscribe "$@"
SH
# squeue stand-in: the state in squeue.state, else the controller does not answer
cat >bin/squeue <<SH
#!/bin/bash
[ -f "$SCRATCH/squeue.state" ] || exit 1
cat "$SCRATCH/squeue.state"
SH
cat >bin/module <<'SH'
#!/bin/bash
exit 0
SH
chmod +x bin/*
cat >env.yaml <<YAML
name: fake-slurm
system: fake-cluster
launcher: srun
np_flag: -n
launcher_args: ["--cpu-bind=cores"]
scheduler: slurm
partition: debug
cores_per_node: 2
env: {OMPI_ALLOW_RUN_AS_ROOT: "1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: "1"}
YAML
head -10 small.yaml >one.yaml
export PATH="$SCRATCH/bin:$PATH"
expect_exit 0 "$MAPP" submit one.yaml --env env.yaml
expect_output "submitted"
expect_output "2 batch scripts"
grep -q '"job_id": "4[0-9]*"' results/batch/jobs.json || fail "jobs.json lacks the job ids"
[ -f results/batch/jobs/heat-mpi-serial-tiny-weak-n2-t1.sbatch ] || fail "script not written"
expect_exit 0 "$MAPP" collect results/batch
expect_output "collected 4 records (0 failed), 0 still pending"
[ "$(count_lines results/batch/results.jsonl)" = 4 ] || fail "expected 4 collected records"
grep -q '"launch":"srun -n 2 --cpu-bind=cores ' results/batch/results.jsonl || fail "launch not recorded"
# each collected record names the environment's system (jobs.json carries it)
[ "$(grep -c '"system":"fake-cluster"' results/batch/results.jsonl)" = 4 ] || fail "collected records lack system: fake-cluster"
expect_exit 0 "$MAPP" collect results/batch
expect_output "collected 0 records (0 failed), 0 still pending, 4 collected before"
# a repetition without its status file is pending, not failed
rm results/batch/runs/heat-mpi-serial-tiny-weak-n1-t1-r1.status
sed -i '/"ranks":1,.*"repetition":1/d' results/batch/results.jsonl
expect_exit 0 "$MAPP" collect results/batch
expect_output "1 still pending"
echo RUNNING >squeue.state
expect_exit 0 "$MAPP" collect results/batch
expect_output "1 still pending"
# the job ended without writing the status: a failure, not pending for ever
echo TIMEOUT >squeue.state
expect_exit 1 "$MAPP" collect results/batch
expect_output "heat-mpi-serial-tiny-weak-n1-t1-r1: job "
expect_output "ended TIMEOUT without running it to the end"
expect_output "collected 1 record (1 failed), 0 still pending, 3 collected before"
grep -q '"ranks":1,.*"repetition":1,.*"exit_code":-1,.*"scheduler_state":"TIMEOUT"' results/batch/results.jsonl ||
  fail "the timed-out repetition was not recorded with its state"
echo "submit: ok"
