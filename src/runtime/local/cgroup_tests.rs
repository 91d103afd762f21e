use super::{Cgroups, Group, field, usable};
use crate::scenario::Envelope;
use std::path::Path;

fn envelope() -> Envelope {
    Envelope {
        cpus: Some(1.5),
        memory_bytes: Some(2 << 30),
        cpuset: Some("1".into()),
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// A root laid out like cgroup v1's cpu, cpuset and memory hierarchies.
fn v1_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for h in ["cpu", "cpuset", "memory"] {
        std::fs::create_dir(root.path().join(h)).unwrap();
        std::fs::write(root.path().join(h).join("cgroup.procs"), "").unwrap();
    }
    std::fs::write(root.path().join("cpuset/cpuset.cpus"), "0-1\n").unwrap();
    std::fs::write(root.path().join("cpuset/cpuset.mems"), "0\n").unwrap();
    root
}

#[test]
fn v1_gets_a_quota_a_memory_limit_and_a_cpuset_with_its_parent_s_memory_nodes() {
    let root = v1_root();
    let mut cgroups = Cgroups::open(root.path(), "r1").unwrap();
    assert_eq!(cgroups.version(), "cgroup v1");
    let parent_cpuset = root.path().join("cpuset/lnbench-r1");
    assert_eq!(read(&parent_cpuset.join("cpuset.cpus")), "0-1");
    let group = cgroups.group("alice", &envelope()).unwrap().clone();
    let cpu = root.path().join("cpu/lnbench-r1/alice");
    assert_eq!(read(&cpu.join("cpu.cfs_quota_us")), "150000");
    assert_eq!(read(&cpu.join("cpu.cfs_period_us")), "100000");
    let memory = root.path().join("memory/lnbench-r1/alice");
    assert_eq!(read(&memory.join("memory.limit_in_bytes")), "2147483648");
    let cpuset = parent_cpuset.join("alice");
    assert_eq!(
        (
            read(&cpuset.join("cpuset.cpus")),
            read(&cpuset.join("cpuset.mems"))
        ),
        ("1".to_string(), "0".to_string())
    );
    group.add(4242).unwrap();
    for dir in [&cpu, &memory, &cpuset] {
        assert_eq!(read(&dir.join("cgroup.procs")), "4242");
    }
    // Read back as the kernel holds them: v1's "no limit" is -1 and about 2^63.
    assert_eq!(group.applied(), envelope());
    std::fs::write(cpu.join("cpu.cfs_quota_us"), "-1\n").unwrap();
    std::fs::write(
        memory.join("memory.limit_in_bytes"),
        "9223372036854771712\n",
    )
    .unwrap();
    let applied = group.applied();
    assert_eq!((applied.cpus, applied.memory_bytes), (None, None));
}

#[test]
fn v1_counters_are_read_in_microseconds_with_the_peak_and_oom_kills() {
    let root = v1_root();
    let mut cgroups = Cgroups::open(root.path(), "r1").unwrap();
    let group = cgroups.group("bob", &envelope()).unwrap().clone();
    let dir = |h: &str| root.path().join(h).join("lnbench-r1/bob");
    std::fs::write(
        dir("cpu").join("cpu.stat"),
        "nr_periods 50\nnr_throttled 7\nthrottled_time 3500000\n",
    )
    .unwrap();
    std::fs::write(dir("memory").join("memory.max_usage_in_bytes"), "1048576\n").unwrap();
    std::fs::write(
        dir("memory").join("memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    )
    .unwrap();
    let k = group.read();
    assert_eq!(
        (
            k.throttled_periods,
            k.throttled_us,
            k.memory_peak_bytes,
            k.oom_kills
        ),
        (Some(7), Some(3500), Some(1048576), Some(2))
    );
}

/// A root laid out like cgroup v2 with the three controllers.
fn v2_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("cgroup.controllers"),
        "cpuset cpu io memory pids\n",
    )
    .unwrap();
    root
}

#[test]
fn v2_hands_the_controllers_down_and_writes_cpu_max_memory_max_and_cpuset() {
    let root = v2_root();
    let mut cgroups = Cgroups::open(root.path(), "r2").unwrap();
    assert_eq!(cgroups.version(), "cgroup v2");
    assert!(read(&root.path().join("cgroup.subtree_control")).contains("+cpu"));
    let parent = root.path().join("lnbench-r2");
    assert!(read(&parent.join("cgroup.subtree_control")).contains("+memory"));
    let tight = Envelope {
        cpus: Some(0.2),
        memory_bytes: Some(64 << 20),
        cpuset: Some("0-1".into()),
    };
    let group = cgroups.group("chain", &tight).unwrap().clone();
    let dir = parent.join("chain");
    assert_eq!(read(&dir.join("cpu.max")), "20000 100000");
    assert_eq!(read(&dir.join("memory.max")), "67108864");
    assert_eq!(read(&dir.join("cpuset.cpus")), "0-1");
    // Read back as the kernel holds them: memory rounded to its pages, `max` for none.
    assert_eq!(group.applied(), tight);
    std::fs::write(dir.join("memory.max"), "67104768\n").unwrap();
    std::fs::write(dir.join("cpu.max"), "max 100000\n").unwrap();
    let applied = group.applied();
    assert_eq!((applied.cpus, applied.memory_bytes), (None, Some(67104768)));
    group.add(7).unwrap();
    assert_eq!(read(&dir.join("cgroup.procs")), "7");
    std::fs::write(
        dir.join("cpu.stat"),
        "usage_usec 10\nnr_throttled 3\nthrottled_usec 900\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("memory.events"),
        "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n",
    )
    .unwrap();
    let k = group.read();
    assert_eq!(
        (
            k.throttled_periods,
            k.throttled_us,
            k.memory_peak_bytes,
            k.oom_kills
        ),
        (Some(3), Some(900), None, Some(1))
    );
    assert_eq!(k.missing(), vec!["memory peak"]);
}

#[test]
fn a_group_asked_for_again_is_the_same_and_keeps_its_envelope() {
    let root = v2_root();
    let mut cgroups = Cgroups::open(root.path(), "r3").unwrap();
    cgroups.group("alice", &envelope()).unwrap();
    let again = cgroups.group("alice", &Envelope::default()).unwrap();
    assert_eq!(again.envelope, envelope());
    assert_eq!(cgroups.groups().len(), 1);
}

#[test]
fn v2_without_controllers_or_nothing_mounted_says_what_to_enable() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("cgroup.controllers"), "pids\n").unwrap();
    let err = usable(root.path()).unwrap_err().to_string();
    assert!(
        err.contains("without the cpu, memory, cpuset controller"),
        "{err}"
    );
    assert!(err.contains("+cpu +memory +cpuset"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = Cgroups::open(empty.path(), "r").unwrap_err().to_string();
    assert!(err.contains("neither cgroup v2"), "{err}");
    assert!(err.contains("remove resources:"), "{err}");
}

#[test]
fn removing_takes_the_groups_and_the_run_s_parent_away() {
    let root = v2_root();
    let mut cgroups = Cgroups::open(root.path(), "r4").unwrap();
    cgroups.group("alice", &Envelope::default()).unwrap();
    // cgroupfs lets a directory go with its control files; a plain one does not.
    let parent = root.path().join("lnbench-r4");
    std::fs::remove_file(parent.join("cgroup.subtree_control")).unwrap();
    cgroups.remove().unwrap();
    assert!(!parent.exists());
    assert!(cgroups.groups().is_empty());
}

#[test]
fn fields_are_found_by_their_whole_name() {
    let text = "nr_throttled 3\nthrottled_usec 900\n";
    assert_eq!(field(text, "throttled_usec"), Some(900));
    assert_eq!(field(text, "throttled"), None);
}

#[test]
fn a_process_s_cgroup_is_found_from_its_proc_lines() {
    let root = v1_root();
    let cpu = root.path().join("cpu/docker/abc");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::create_dir_all(root.path().join("memory/docker/abc")).unwrap();
    std::fs::write(
        cpu.join("cpu.stat"),
        "nr_throttled 5\nthrottled_time 2000\n",
    )
    .unwrap();
    let lines = "12:cpuset:/docker/abc\n4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n0::/\n";
    let group = Group::of_lines(root.path(), lines).unwrap();
    let k = group.read();
    assert_eq!((k.throttled_periods, k.throttled_us), (Some(5), Some(2)));
    assert!(Group::of_lines(root.path(), "4:cpu:/docker/gone\n").is_none());
}
