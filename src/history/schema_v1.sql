-- Results store, schema version 1. A run (one report directory), its points (the
-- run itself, or each sweep point and repeat), and each point's nodes.
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    scenario TEXT NOT NULL,
    scenario_hash TEXT NOT NULL,
    runtime TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    complete INTEGER NOT NULL,
    source TEXT NOT NULL,
    host_cpu TEXT NOT NULL,
    host_cores INTEGER NOT NULL,
    host_memory INTEGER NOT NULL,
    host_os TEXT NOT NULL,
    host_kernel TEXT NOT NULL,
    host_class TEXT NOT NULL,
    UNIQUE (source, started_at, scenario_hash)
);
CREATE INDEX runs_by_scenario ON runs (scenario_hash, started_at);
CREATE TABLE points (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    grp TEXT NOT NULL,
    repeat INTEGER,
    report TEXT NOT NULL,
    complete INTEGER NOT NULL,
    load TEXT NOT NULL,
    envelope TEXT NOT NULL,
    outside_load_pct REAL,
    steal_pct REAL,
    disturbed INTEGER,
    ok INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    tps REAL NOT NULL,
    p50_us INTEGER NOT NULL,
    p90_us INTEGER NOT NULL,
    p99_us INTEGER NOT NULL,
    cpu_pct REAL
);
CREATE INDEX points_by_run ON points (run_id);
CREATE TABLE nodes (
    point_id INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    implementation TEXT NOT NULL,
    version TEXT NOT NULL,
    commit_id TEXT,
    database TEXT,
    cpu_pct REAL
);
CREATE INDEX nodes_by_point ON nodes (point_id);
