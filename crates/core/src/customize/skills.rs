//! Skills (the Agent Skills convention): folders holding a `SKILL.md` whose front matter names
//! the skill and says when to use it. The system prompt lists each skill's name and
//! description; the `load_skill` tool (tools/load_skill.rs) returns a skill's instructions and
//! its other files.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::frontmatter;

/// The file that makes a folder a skill.
pub(crate) const FILE: &str = "SKILL.md";
/// The longest description the convention allows.
const MAX_DESCRIPTION: usize = 1024;
/// Most files listed for one skill, and how deep its folder is walked.
const MAX_FILES: usize = 200;
const MAX_DEPTH: usize = 6;

/// A skill found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    /// Its name (also its folder's name).
    pub(crate) name: String,
    /// When to use it.
    pub(crate) description: String,
    /// Its folder (canonical).
    pub(crate) dir: PathBuf,
}

#[derive(Deserialize)]
struct Front {
    name: Option<String>,
    description: Option<String>,
}

/// Every valid skill of a session, in the order found.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    skills: Vec<Skill>,
}

impl Catalog {
    /// Reads the skills in `dirs` (each holding one folder per skill), earlier folders first:
    /// a later skill with a name already taken is reported and skipped, as is every folder
    /// that is not a valid skill.
    pub(crate) fn discover(dirs: &[PathBuf]) -> Self {
        let mut skills: Vec<Skill> = Vec::new();
        for dir in dirs {
            let Ok(root) = crate::platform::canonical(dir) else {
                continue;
            };
            let Ok(entries) = std::fs::read_dir(&root) else {
                continue;
            };
            let mut folders: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            folders.sort();
            for folder in folders {
                match read(&root, &folder) {
                    Ok(skill) => {
                        if let Some(first) = skills.iter().find(|s| s.name == skill.name) {
                            tracing::warn!(
                                skill = %skill.name,
                                path = %folder.display(),
                                "skill skipped: a skill of the same name is already in {}",
                                first.dir.display()
                            );
                            continue;
                        }
                        skills.push(skill);
                    }
                    Err(why) => {
                        tracing::warn!(path = %folder.display(), "skill skipped: {why}");
                    }
                }
            }
        }
        Self { skills }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills.
    pub(crate) fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The system prompt's list of skills (names and descriptions only), or nothing.
    pub(crate) fn prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "\n\n## Skills\n\nSkills hold instructions for particular tasks. When a task matches a \
             skill's description, call `load_skill` with its name before you start, then follow \
             what it says.\n",
        );
        for skill in &self.skills {
            text.push_str(&format!("\n- {}: {}", skill.name, skill.description));
        }
        text
    }
}

/// Reads the skill in `folder`, a child of `root` (both canonical or about to be).
fn read(root: &Path, folder: &Path) -> Result<Skill, String> {
    let dir = crate::platform::canonical(folder)
        .map_err(|e| format!("cannot resolve the folder: {e}"))?;
    if !dir.starts_with(root) {
        return Err(format!(
            "the folder leads outside {} (to {})",
            root.display(),
            dir.display()
        ));
    }
    let file = dir.join(FILE);
    let resolved =
        crate::platform::canonical(&file).map_err(|_| format!("no {FILE} in the folder"))?;
    if !resolved.starts_with(&dir) {
        return Err(format!("{FILE} leads outside the skill's folder"));
    }
    let text =
        std::fs::read_to_string(&resolved).map_err(|e| format!("cannot read {FILE}: {e}"))?;
    let (front, _) = frontmatter::parse::<Front>(&text).map_err(|e| format!("{FILE}: {e}"))?;
    let name = front
        .name
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| format!("{FILE} has no `name` in its front matter"))?;
    let description = front
        .description
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .ok_or_else(|| format!("{FILE} has no `description` in its front matter"))?;
    if !valid_name(&name) {
        return Err(format!(
            "the name `{name}` must be 1-64 lowercase letters, digits and single hyphens"
        ));
    }
    let folder_name = dir.file_name().map(|n| n.to_string_lossy().to_string());
    if folder_name.as_deref() != Some(name.as_str()) {
        return Err(format!(
            "the name `{name}` differs from its folder's name `{}`",
            folder_name.unwrap_or_default()
        ));
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "the description is longer than {MAX_DESCRIPTION} characters"
        ));
    }
    Ok(Skill {
        name,
        description,
        dir,
    })
}

/// A skill name per the convention: lowercase letters, digits and hyphens, no leading,
/// trailing or double hyphen, at most 64 characters.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The files of a skill besides `SKILL.md`, sorted; files whose real path leads outside the
/// skill's folder are left out (and reported).
pub(crate) fn files(skill: &Skill) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(skill.dir.clone(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Ok(real) = crate::platform::canonical(&path) else {
                continue;
            };
            if !real.starts_with(&skill.dir) {
                tracing::warn!(skill = %skill.name, path = %path.display(), "skill file left out: it leads outside the skill's folder");
                continue;
            }
            if real.is_dir() {
                if depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if path != skill.dir.join(FILE) {
                out.push(path);
            }
        }
    }
    out.sort();
    out.truncate(MAX_FILES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    // Symlinks need no privilege only on Unix.
    #[cfg(unix)]
    #[test]
    fn finds_valid_skills_and_skips_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        let user = tmp.path().join("user");
        write(
            &project.join("pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Work with PDF files.\n---\nUse pdftotext.\n",
        );
        write(&project.join("pdf/scripts/x.py"), "print(1)\n");
        write(&project.join("no-front/SKILL.md"), "Just text.\n");
        write(
            &project.join("Bad_Name/SKILL.md"),
            "---\nname: Bad_Name\ndescription: d\n---\n",
        );
        write(
            &project.join("other/SKILL.md"),
            "---\nname: mismatch\ndescription: d\n---\n",
        );
        write(&project.join("nodesc/SKILL.md"), "---\nname: nodesc\n---\n");
        std::fs::create_dir_all(project.join("empty")).unwrap();
        write(
            &user.join("pdf/SKILL.md"),
            "---\nname: pdf\ndescription: The user's pdf skill.\n---\n",
        );
        write(
            &user.join("review/SKILL.md"),
            "---\nname: review\ndescription: >\n  Review code\n  carefully.\n---\nBody\n",
        );
        let outside = tmp.path().join("outside");
        write(
            &outside.join("SKILL.md"),
            "---\nname: escape\ndescription: d\n---\n",
        );
        std::os::unix::fs::symlink(&outside, user.join("escape")).unwrap();
        std::os::unix::fs::symlink(outside.join("SKILL.md"), project.join("pdf/leak.md")).unwrap();

        let catalog = Catalog::discover(&[project.clone(), tmp.path().join("missing"), user]);
        let names: Vec<_> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf", "review"]);
        assert_eq!(catalog.skills()[0].description, "Work with PDF files.");
        assert_eq!(catalog.skills()[1].description, "Review code carefully.");
        let section = catalog.prompt_section();
        assert!(section.contains("- pdf: Work with PDF files."), "{section}");
        assert!(
            !section.contains("pdftotext"),
            "bodies stay out of the prompt"
        );
        let listed = files(&catalog.skills()[0]);
        assert_eq!(listed, [catalog.skills()[0].dir.join("scripts/x.py")]);
    }

    #[test]
    fn names_follow_the_convention() {
        assert!(valid_name("pdf-tools2"));
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a/b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
