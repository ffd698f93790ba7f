/// This library's version (semantic versioning; the tag it is published under).
/// `scripts/publish-roostkit.sh` checks it against CHANGELOG.md's newest entry.
public enum RoostKitVersion {
    public static let current = "0.3.0"
}
