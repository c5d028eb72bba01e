//! The tuning cache (DESIGN §6): persistence across processes (a second process with the
//! file searches nothing), two processes writing one file at once, truncated and foreign
//! files recovered, the C API; and, on every GPU present, convolutions searched
//! exhaustively on 8 threads while other threads synchronize and allocate (cuDNN's Find must
//! not make their calls fail).
//!
//! The processes are this test binary run again with `TUNING_CHILD` set (see [`child`]).

use rocm_backend::device::tuning::{self, Choice};
use std::path::Path;
use std::process::Command;

fn choice(i: i32) -> Choice {
    Choice {
        algo: i,
        math: 1,
        workspace: 1024 * i as usize,
        exhaustive: true,
    }
}

/// The child's part: `TUNING_CHILD=<file>|<mode>|<first>|<count>` with mode `search` (store
/// keys first..first+count, searching each) or `hit` (every key must come from the file:
/// a search is a failure). Prints its stats.
#[test]
fn child() {
    let Ok(spec) = std::env::var("TUNING_CHILD") else {
        return; // not a child: nothing to do (the parent tests below spawn it)
    };
    let f: Vec<&str> = spec.split('|').collect();
    let (file, mode, first, count): (&str, &str, i32, i32) =
        (f[0], f[1], f[2].parse().unwrap(), f[3].parse().unwrap());
    tuning::set_file(Some(Path::new(file))).unwrap();
    tuning::set_exhaustive(Some(true));
    for i in first..first + count {
        let key = format!("conv|test-arch|lib 1.0|nchw|exact|problem {i}");
        let got = tuning::tuned(&key, |ex| {
            assert_eq!(
                mode, "search",
                "key {i} was searched though the file holds it"
            );
            assert!(ex);
            Ok(choice(i))
        })
        .unwrap();
        assert_eq!(got, choice(i));
    }
    let s = tuning::stats();
    println!(
        "\nSTATS hits={} searches={} loaded={} warnings={}",
        s.hits, s.searches, s.loaded, s.file_warnings
    );
}

/// Runs the child with `spec`; returns its stats line's numbers (hits, searches, loaded,
/// warnings).
fn spawn(spec: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env("TUNING_CHILD", spec)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(c: std::process::Child) -> [u64; 4] {
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.split_once("STATS ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no stats in:\n{text}"));
    let mut v = [0u64; 4];
    for (i, kv) in line.split_whitespace().take(4).enumerate() {
        v[i] = kv.split('=').nth(1).unwrap().parse().unwrap();
    }
    v
}

fn entries_in(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count()
}

#[test]
fn a_second_process_with_the_file_searches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tuning.txt");
    let f = file.display();
    let [hits, searches, _, warnings] = finish(spawn(&format!("{f}|search|0|20")));
    assert_eq!((hits, searches, warnings), (0, 20, 0));
    assert_eq!(entries_in(&file), 20);
    let [hits, searches, loaded, warnings] = finish(spawn(&format!("{f}|hit|0|20")));
    assert_eq!((hits, searches, loaded, warnings), (20, 0, 20, 0));
}

#[test]
fn processes_writing_one_file_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.txt");
    let f = file.display();
    let a = spawn(&format!("{f}|search|0|40"));
    let b = spawn(&format!("{f}|search|1000|40"));
    let c = spawn(&format!("{f}|search|2000|40"));
    for r in [finish(a), finish(b), finish(c)] {
        assert_eq!(r[1], 40, "each searched its own keys");
    }
    assert_eq!(
        entries_in(&file),
        120,
        "every process's entries are in the file"
    );
    let [hits, searches, loaded, _] = finish(spawn(&format!("{f}|hit|1000|40")));
    assert_eq!((hits, searches, loaded), (40, 0, 120));
}

#[test]
fn truncated_and_foreign_files_are_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.txt");
    let f = file.display();
    finish(spawn(&format!("{f}|search|0|10")));
    // Cut the file in the middle of its last line.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() - 7]).unwrap();
    // Nine entries survive; the tenth is searched again and the file repaired.
    let [hits, searches, loaded, warnings] = finish(spawn(&format!("{f}|search|0|10")));
    assert_eq!((hits, searches, loaded), (9, 1, 9));
    // at the load, and again when the search's write merges the file
    assert!((1..=2).contains(&warnings), "{warnings}");
    assert_eq!(entries_in(&file), 10);
    // A file that is not a tuning cache: ignored with a warning, then replaced.
    std::fs::write(&file, b"\x00\x01 not a cache \xff\xfe").unwrap();
    let [hits, searches, loaded, warnings] = finish(spawn(&format!("{f}|search|0|3")));
    assert_eq!((hits, searches, loaded), (0, 3, 0));
    assert!(warnings >= 1);
    assert_eq!(entries_in(&file), 3);
    std::fs::write(&file, "# some other tool v7\nkey\t1\t2\t3\texhaustive\n").unwrap();
    let [_, searches, loaded, warnings] = finish(spawn(&format!("{f}|search|0|2")));
    assert_eq!((searches, loaded), (2, 0));
    assert!(warnings >= 1);
}

#[test]
fn the_c_api_sets_reads_and_refuses() {
    use rocm_backend::ffi::tuning::*;
    use std::ffi::CString;
    let dir = tempfile::tempdir().unwrap();
    // A path in a directory that does not exist, and a directory, are refused.
    let bad = CString::new(dir.path().join("no/such/dir/t.txt").to_str().unwrap()).unwrap();
    assert_ne!(
        unsafe { rb_tuning_cache_set_file(bad.as_ptr()) } as i32,
        0,
        "a missing directory is refused"
    );
    let d = CString::new(dir.path().to_str().unwrap()).unwrap();
    assert_ne!(unsafe { rb_tuning_cache_set_file(d.as_ptr()) } as i32, 0);
    assert_ne!(rb_tuning_cache_set_exhaustive(2) as i32, 0);
    assert_eq!(rb_tuning_cache_set_exhaustive(-1) as i32, 0);
    let mut st = rb_tuning_cache_stats::default();
    assert_eq!(unsafe { rb_tuning_cache_get_stats(&mut st) } as i32, 0);
    assert_ne!(
        unsafe { rb_tuning_cache_get_stats(std::ptr::null_mut()) } as i32,
        0
    );
    let mut need = 0usize;
    assert_eq!(
        unsafe { rb_tuning_cache_last_warning(std::ptr::null_mut(), 0, &mut need) } as i32,
        0
    );
    assert!(need >= 1);
    assert_eq!(
        unsafe { rb_tuning_cache_set_file(std::ptr::null()) } as i32,
        0
    );
    assert_eq!(rb_tuning_cache_clear() as i32, 0);
}

/// 8 threads each running convolutions of their own shapes with exhaustive search, while 4
/// others synchronize the device and their streams and allocate: nobody fails. On a GPU this
/// is cuDNN's/MIOpen's Find racing other threads' calls; on the CPU a concurrency check.
#[test]
fn searches_on_8_threads_do_not_disturb_others() {
    use rocm_backend::ops::conv::{Activation, ConvAttrs};
    use rocm_backend::runtime::{Stream, Tensor, context};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut devs = vec![context::resolve(Some("cpu")).unwrap()];
    for name in ["cuda", "rocm"] {
        match context::resolve(Some(name)) {
            Ok(d) => devs.push(d),
            Err(e) => eprintln!("tuning: {name} case skipped: {e}"),
        }
    }
    for dev in devs {
        let before = tuning::stats();
        let stop = Arc::new(AtomicBool::new(false));
        let mut others = vec![];
        for _ in 0..4 {
            let (dev, stop) = (dev.clone(), stop.clone());
            others.push(std::thread::spawn(move || {
                let s = Stream::new(dev.clone()).unwrap();
                let mut n = 0u64;
                // at least one round each, however the scheduler orders the threads
                while n == 0 || !stop.load(Ordering::Relaxed) {
                    let t = Tensor::zeros(
                        dev.clone(),
                        &[256, 256],
                        rocm_backend::base::dtype::DType::F32,
                    )
                    .unwrap();
                    s.synchronize().unwrap();
                    dev.synchronize().unwrap();
                    drop(t);
                    n += 1;
                }
                n
            }));
        }
        let workers: Vec<_> = (0..8usize)
            .map(|i| {
                let dev = dev.clone();
                std::thread::spawn(move || {
                    tuning::exhaustive_scope(true, || {
                        let s = Stream::new(dev.clone()).unwrap();
                        let x = Tensor::from_f32(
                            dev.clone(),
                            &vec![0.5; 2 * 8 * (10 + i) * 12],
                            &[2, 8, 10 + i, 12],
                        )
                        .unwrap();
                        let w =
                            Tensor::from_f32(dev.clone(), &vec![0.25; 16 * 8 * 9], &[16, 8, 3, 3])
                                .unwrap();
                        let a = ConvAttrs {
                            padding: vec![1],
                            ..ConvAttrs::default()
                        };
                        for _ in 0..3 {
                            let y = rocm_backend::runtime::conv::conv(
                                Some(&s),
                                &x,
                                &w,
                                None,
                                &a,
                                2,
                                Activation::None,
                                None,
                            )
                            .unwrap();
                            s.synchronize().unwrap();
                            let v = y.to_f64_vec().unwrap();
                            // interior outputs see all 72 taps: 72 * 0.5 * 0.25
                            assert!((v[12 + 1] - 9.0).abs() < 1e-4, "{}", v[13]);
                        }
                    })
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a worker failed");
        }
        stop.store(true, Ordering::Relaxed);
        for o in others {
            assert!(o.join().expect("a synchronizing thread failed") > 0);
        }
        let after = tuning::stats();
        eprintln!(
            "tuning on {}: {} searches ({} exhaustive), {} hits",
            dev.name(),
            after.searches - before.searches,
            after.exhaustive_searches - before.exhaustive_searches,
            after.hits - before.hits
        );
        if !dev.name().starts_with("cpu") {
            assert!(after.exhaustive_searches - before.exhaustive_searches >= 8);
        }
    }
}

/// On cuDNN, half-precision convolutions (channels-first and channels-last) are chosen among
/// the backend (graph) API's engines: their tuning entries carry the graph marker (math
/// 1000). A graph the library refused would fall back to the legacy API silently; this is
/// the check that it does not (a stride bug once made every graph plan fail unnoticed).
#[test]
fn half_convolutions_take_cudnn_graph_engines() {
    use rocm_backend::base::dtype::DType;
    use rocm_backend::ops::conv::{Activation, ConvAttrs, ConvAttrsEx, Layout};
    use rocm_backend::runtime::{Tensor, context, conv, data};
    let Ok(dev) = context::resolve(Some("cuda")) else {
        eprintln!("tuning: cuda case skipped: no CUDA device");
        return;
    };
    if std::env::var_os("RB_CUDNN_LEGACY").is_some() {
        eprintln!("tuning: graph-engine case skipped: RB_CUDNN_LEGACY is set");
        return;
    }
    for dt in [DType::F16, DType::BF16] {
        let c = |t: Tensor| data::cast(None, &t, dt, None).unwrap();
        let x = c(
            Tensor::from_f32(dev.clone(), &vec![0.25; 2 * 16 * 13 * 11], &[2, 16, 13, 11]).unwrap(),
        );
        let w = c(
            Tensor::from_f32(dev.clone(), &vec![0.5; 24 * 16 * 3 * 3], &[24, 16, 3, 3]).unwrap(),
        );
        let a = ConvAttrs {
            padding: vec![1],
            ..Default::default()
        };
        let y = conv::conv(None, &x, &w, None, &a, 2, Activation::None, None).unwrap();
        assert_eq!(y.shape(), &[2, 24, 13, 11]);
        let xl = data::to_channels_last(None, &x, None).unwrap();
        let wl = data::to_channels_last(None, &w, None).unwrap();
        let ex = ConvAttrsEx {
            attrs: a.clone(),
            pad_after: vec![1],
            layout: Layout::ChannelsLast,
        };
        let yl = conv::conv_ex(None, &xl, &wl, None, &ex, 2, Activation::None, None).unwrap();
        assert_eq!(yl.shape(), &[2, 13, 11, 24]);
        for layout in ["nchw", "nhwc"] {
            let hits: Vec<_> = tuning::entries_matching(&format!("|{layout}|"))
                .into_iter()
                .filter(|(k, _)| {
                    k.contains(&format!("dtype: {dt:?}")) && k.contains("x: [2, 16, 13, 11")
                })
                .collect();
            assert!(
                !hits.is_empty(),
                "{dt} {layout}: no tuning entry for the convolution"
            );
            for (k, ch) in hits {
                assert_eq!(
                    ch.math, 1000,
                    "{k}: {ch:?} did not take a cuDNN graph engine"
                );
            }
        }
    }
}
