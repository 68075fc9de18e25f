//! Attachments in the real binary, in tmux: the inspector lists a message's
//! `meta: attachments` and says whether each file in `[attachments] dir` matches; in the
//! composer, M-a asks for a path and attaches the file (digest computed, entry added to META).

use crate::helpers::tmux;

use tmux::{Term, status_line};

const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[test]
fn inspector_lists_attachments_and_the_composer_attaches_a_file() {
    let Some(t) = Term::new() else { return };
    let files = t.path("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "abc").unwrap();
    std::fs::write(files.join("plan.md"), "changed").unwrap();
    std::fs::write(files.join("new.txt"), "fresh").unwrap();
    std::fs::write(
        t.path("config.toml"),
        format!("[attachments]\ndir = {:?}\n", files.to_str().unwrap()),
    )
    .unwrap();
    let env = format!(
        "[[claude→op v1]]\nuser: kalle\nthread: 01KAQ4W5J8Z0000000000000A1\n\
         message: 01KAQ4W5J8Z0000000000000A1\ncontext: attachments tmux\nintent: REQUEST\n\n\
         meta: attachments\nA1: text/plain;name=notes.txt;size=3;digest=sha256:{ABC}\n\
         A2: text/markdown;name=plan.md;digest=sha256:{ABC}\nA3: name=gone.txt;sha256={ABC}\n\n\
         body: |\n  see the files\nsig: none\n[[END]]\n"
    );
    let file = t.path("in.crosstalk");
    std::fs::write(&file, env).unwrap();
    t.import(&[&file]);
    t.start(160, 50, &[]);
    let s = t.wait_for("see the files");
    let s = if s.contains("meta: attachments") {
        s
    } else {
        t.keys(&["Enter"]);
        t.wait_for("meta: attachments")
    };
    assert!(
        s.contains("A1 notes.txt · text/plain · 3 bytes · sha256:ba7816bf8f0…0015ad · ok"),
        "{s}"
    );
    assert!(s.contains("A2 plan.md · text/markdown"), "{s}");
    assert!(s.contains("digest mismatch"), "{s}");
    assert!(s.contains("A3 gone.txt · (no type)"), "{s}");
    assert!(s.contains("missing"), "{s}");

    // Reply, attach a file through M-a (the path typed, Enter).
    t.type_text("r");
    t.wait_for("Reply to");
    t.type_text("Here it is.");
    t.keys(&["M-a"]);
    t.wait_for(":attach");
    t.type_text(files.join("new.txt").to_str().unwrap());
    t.keys(&["Enter"]);
    let s = t.wait_for("Attached new.txt as A1");
    assert!(status_line(&s).contains("5 bytes"), "{s}");
    let s = t.wait_for("name=new.txt;size=5;digest=sha256:");
    assert!(s.contains("meta: attachments"), "{s}");
    // Attaching it again updates the entry instead of adding one.
    std::fs::write(files.join("new.txt"), "fresher").unwrap();
    t.keys(&["M-a"]);
    t.wait_for(":attach");
    t.type_text(files.join("new.txt").to_str().unwrap());
    t.keys(&["Enter"]);
    let s = t.wait_for("name=new.txt;size=7;digest=sha256:");
    assert!(!s.contains("A2: text/plain;name=new.txt"), "{s}");
    t.keys(&["C-s"]);
    t.keys(&["Escape"]);
    t.wait_gone("Reply to");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
