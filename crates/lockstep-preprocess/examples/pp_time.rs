fn main() {
    let path = std::env::args().nth(1).unwrap();
    let mut db = lockstep_source::SourceDb::new();
    let f = db.add(path.clone(), std::fs::read_to_string(&path).unwrap());
    let t = std::time::Instant::now();
    let out = lockstep_preprocess::preprocess(&mut db, f, &Default::default(), &lockstep_preprocess::FsLoader);
    println!("{} bytes in {:?}", out.text.len(), t.elapsed());
}
