//! The fuzz target's seed corpus (`fuzz/seeds/`), and deterministic mutations of it, run on
//! stable Rust: what libFuzzer explores for hours (`fuzz/run.sh`) stays covered in CI. Every
//! line tandem writes must be JSON-RPC and valid against the ACP schema, no task may panic,
//! and no run may hang.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tandem::harness;

use crate::common::acp_client::schema_violations_for;

static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn watch_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(harness::THREAD_NAME) {
                PANICS.lock().unwrap().push(info.to_string());
            }
            default(info);
        }));
    });
}

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One of a few libFuzzer-like mutations.
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(data.len() + 1);
                data.insert(
                    i,
                    [0u8, 5, 8, 11, 16, 20, 27, b'\n', b'"', b'{'][rng.below(10)],
                );
            }
            2 if !data.is_empty() => data.truncate(rng.below(data.len())),
            3 => {
                let copy = data.clone();
                data.push(b'\n');
                data.extend_from_slice(&copy);
            }
            _ => {
                let i = rng.below(data.len() + 1);
                let junk: Vec<u8> = (0..rng.below(12)).map(|_| rng.next() as u8).collect();
                data.splice(i..i, junk);
            }
        }
    }
    data
}

/// Runs one input and returns what is wrong with tandem's output.
fn problems(input: &[u8]) -> Vec<String> {
    let expanded = harness::expand(input);
    // Which method each request id asked, to check answers against their result schema.
    let asked: HashMap<String, String> = expanded
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter_map(|m| Some((m.get("id")?.to_string(), m["method"].as_str()?.to_string())))
        .collect();
    let mut found = Vec::new();
    for line in harness::run(&expanded) {
        if let Some(problem) = harness::check_line(&line) {
            found.push(problem);
            continue;
        }
        let message: Value = serde_json::from_slice(&line).unwrap();
        let answered = message
            .get("id")
            .filter(|_| message.get("method").is_none())
            .and_then(|id| asked.get(&id.to_string()))
            .map(String::as_str);
        found.extend(schema_violations_for(&message, answered));
    }
    found
}

#[test]
fn the_seed_corpus_and_its_mutations_keep_the_message_path_sound() {
    watch_panics();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 20, "the seed corpus is in {}", dir.display());
    let mut rng = Rng(0x7a6e_6465_6d00_0001);
    let mut runs = 0;
    for (name, seed) in &seeds {
        let mut inputs = vec![seed.clone()];
        inputs.extend((0..6).map(|_| mutate(seed, &mut rng)));
        for input in inputs {
            let found = problems(&input);
            assert!(
                found.is_empty(),
                "{name} (or a mutation of it): {found:#?}\ninput: {:?}",
                String::from_utf8_lossy(&input)
            );
            runs += 1;
        }
    }
    let panics = PANICS.lock().unwrap();
    assert!(panics.is_empty(), "tandem panicked: {panics:#?}");
    assert_eq!(runs, seeds.len() * 7);
}
